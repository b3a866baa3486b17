"""Hook implementations of rolloutgym-code. Imports nothing heavy: entry points are strings."""

from __future__ import annotations

from rolloutgym_protocol import EnvSpec, TemplateSpec, hookimpl


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
        ),
    ]


@hookimpl
def rolloutgym_templates() -> list[TemplateSpec]:
    return [
        TemplateSpec(
            name="code-editing",
            entry_point="rolloutgym_code.template:compile_code_editing",
            description="config={'files': {path: content}}; hidden_ground_truth holds hidden tests and/or expected files; tests run in a sandbox.",
        )
    ]
