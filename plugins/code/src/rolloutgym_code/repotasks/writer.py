"""Kept bugs as Harbor task folders: one folder per bug, written to a temporary folder and
renamed into place only when every task is written (never a half-written output).

Each task folder::

    instruction.md        an issue-like report: the failing tests' names and first message lines
    task.toml             [metadata]: package, version, license, split, operator, difficulty signals
    environment/          Dockerfile (WORKDIR /app, COPY repo/ /app/) and repo/: the project with
                          the bug and without the hidden test files
    tests/test.sh         the verifier: python3 /tests/grade.py (original tests laid over a copy)
    tests/grading.json    hidden test files, the tests that must pass, pytest flags
    tests/trusted/        the project's original test folders, test files and pytest config
    solution/solve.sh     the reverse patch, applied by exact replacement (the oracle)
    solution/fix.patch    the same change as a unified diff
"""

from __future__ import annotations

import difflib
import json
import os
import random
import re
import shutil
import tempfile
from collections.abc import Mapping
from importlib.resources import files as package_files
from pathlib import Path, PurePosixPath
from typing import Any

from .generate import Bug, Generation
from .project import CONFIG_FILES, RepoTaskError
from .runner import PYTEST_FLAGS, reporter_source

__all__ = ["instruction_text", "task_metadata", "write_tasks"]

_PASSING_FILES = 2
_SHOWN_FAILURES = 8


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "project"


def instruction_text(generation: Generation, bug: Bug) -> str:
    """The issue: which tests fail and how (never the change itself)."""
    project = generation.project
    lines = [
        f"# Tests of `{project.name}` fail",
        "",
        f"This is the source of `{project.name}` {project.version} (in the current folder). A change broke some "
        f"of its behaviour: {len(bug.failing)} test(s) of the project's test suite now fail:",
        "",
    ]
    for test, message in list(bug.failing.items())[:_SHOWN_FAILURES]:
        shown = message.strip().splitlines()[0][:200] if message.strip() else "(no message)"
        lines.append(f"- `{test}`: {shown}")
    if len(bug.failing) > _SHOWN_FAILURES:
        lines.append(f"- ... and {len(bug.failing) - _SHOWN_FAILURES} more")
    lines += [
        "",
        "Find the cause in the library's code and fix it, so that these tests pass again and the rest of the "
        "test suite keeps passing. The failing test files are not in your copy (the project's other tests are); "
        "`python3 -m pytest` runs tests. Do not change the tests: the original ones decide.",
    ]
    return "\n".join(lines) + "\n"


def _names_function(bug: Bug) -> bool:
    name = bug.mutation.function.rsplit(".", 1)[-1].strip("_").lower()
    return bool(name) and any(name in test.split("::", 1)[-1].lower() for test in bug.failing)


def task_metadata(generation: Generation, bug: Bug, split: str, hidden: int) -> dict[str, Any]:
    """``[metadata]`` of the task: provenance and the difficulty signals."""
    project = generation.project
    touched = bug.lines_touched(project.files[bug.module])
    names = _names_function(bug)
    failing = len(bug.failing)
    difficulty = "easy" if names and failing >= 3 else "hard" if not names and failing <= 2 else "medium"
    return {
        "difficulty": difficulty,
        "category": "bugfix",
        "tags": ["python", "repo-bugs", bug.mutation.operator],
        "split": split,
        "package": project.name,
        "package_version": project.version,
        "license": project.license,
        "operator": bug.mutation.operator,
        "module": bug.module,
        "function": bug.mutation.function,
        "line": bug.mutation.line,
        "tests_failing": failing,
        "lines_touched": touched,
        "names_function": names,
        "hidden_tests": hidden,
    }


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return json.dumps(str(value))


def _task_toml(task_id: str, metadata: Mapping[str, Any], verifier_timeout: float) -> str:
    lines = ['version = "1.0"', "", "[task]", f"name = {_toml_value(task_id)}", "", "[metadata]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in metadata.items()]
    lines += ["", "[agent]", "timeout_sec = 1800.0", "", "[verifier]", f"timeout_sec = {verifier_timeout:.1f}", ""]
    return "\n".join(lines)


def _is_trusted(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1]
    in_tests = any(part in ("tests", "test", "testing") for part in parts[:-1])
    is_test = name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    return in_tests or is_test or name == "conftest.py" or (len(parts) == 1 and name in CONFIG_FILES)


def _solve_script(original: str, buggy: str, module: str) -> str:
    old_lines, new_lines = buggy.splitlines(keepends=True), original.splitlines(keepends=True)
    start = 0
    while start < min(len(old_lines), len(new_lines)) and old_lines[start] == new_lines[start]:
        start += 1
    end_old, end_new = len(old_lines), len(new_lines)
    while end_old > start and end_new > start and old_lines[end_old - 1] == new_lines[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    for context in (2, 5, 12, len(old_lines)):
        context_start = max(0, start - context)
        old = "".join(old_lines[context_start : end_old + context])
        new = "".join(new_lines[context_start:start]) + "".join(new_lines[start:end_new])
        new += "".join(old_lines[end_old : end_old + context])
        if buggy.count(old) == 1:
            break
    payload = json.dumps({"path": module, "old": old, "new": new})
    return (
        "#!/bin/bash\n# The reference fix: the generated bug's reverse patch, applied by exact replacement.\n"
        "python3 - <<'RG_FIX'\nimport json\n"
        f"fix = json.loads({payload!r})\n"
        'text = open(fix["path"], encoding="utf-8").read()\n'
        'assert text.count(fix["old"]) == 1, "the code around the fix has changed"\n'
        'open(fix["path"], "w", encoding="utf-8").write(text.replace(fix["old"], fix["new"]))\n'
        "RG_FIX\n"
    )


def _task_files(generation: Generation, bug: Bug, split: str, rng: random.Random) -> tuple[str, dict[str, str]]:
    project = generation.project
    failing_files = sorted({test.split("::", 1)[0] for test in bug.failing})
    others = [path for path in generation.passed if path not in failing_files]
    sampled = sorted(rng.sample(others, min(_PASSING_FILES, len(others))))
    hidden_files = failing_files + sampled
    expected = [test for path in hidden_files for test in generation.passed.get(path, [])]
    task_id = f"{_slug(project.name)}-{bug.digest[:8]}"
    repository = {**project.files, bug.module: bug.buggy}
    for path in hidden_files:
        repository.pop(path, None)
    timeout = max(60.0, 5 * generation.baseline_seconds + 30)
    grading = {
        "workdir": "/app",
        "source_root": project.source_root,
        "hidden_files": hidden_files,
        "expected": expected,
        "fail_to_pass": sorted(bug.failing),
        "pytest_flags": list(PYTEST_FLAGS),
        "timeout": timeout,
    }
    patch = "".join(
        difflib.unified_diff(
            bug.buggy.splitlines(keepends=True),
            project.files[bug.module].splitlines(keepends=True),
            f"a/{bug.module}",
            f"b/{bug.module}",
        )
    )
    files = {
        "instruction.md": instruction_text(generation, bug),
        "task.toml": _task_toml(task_id, task_metadata(generation, bug, split, len(expected)), timeout + 60),
        "environment/Dockerfile": (
            "# Generated by `rolloutgym tasks make-repo`. On bubblewrap the host's python3 and python3-pytest run\n"
            "# the tests; a Docker build installs pytest (offline: map the base image, --image-map).\n"
            "FROM python:3.11-slim\nRUN pip install --no-cache-dir 'pytest>=7'\nWORKDIR /app\nCOPY repo/ /app/\n"
        ),
        "tests/test.sh": "#!/bin/bash\n# The verifier: a fresh sandbox after the agent's commands ended.\n"
        "exec python3 /tests/grade.py\n",
        "tests/grade.py": package_files("rolloutgym_code.repotasks").joinpath("data/grade.py").read_text("utf-8"),
        "tests/support/rg_report.py": reporter_source(),
        "tests/grading.json": json.dumps(grading, indent=1) + "\n",
        "solution/solve.sh": _solve_script(project.files[bug.module], bug.buggy, bug.module),
        "solution/fix.patch": patch,
    }
    files.update({f"environment/repo/{path}": text for path, text in repository.items()})
    files.update({f"tests/trusted/{path}": text for path, text in project.files.items() if _is_trusted(path)})
    return task_id, files


def _manifest(generation: Generation, split: str, seed: int, ids: list[str]) -> dict[str, Any]:
    project = generation.project
    return {
        "generator": "rolloutgym tasks make-repo",
        "package": project.name,
        "version": project.version,
        "license": project.license,
        "split": split,
        "seed": seed,
        "tasks": ids,
        "candidates": generation.candidates,
        "tried": generation.tried,
        "kept": len(generation.bugs),
        "rejected": generation.rejected,
        "baseline_seconds": round(generation.baseline_seconds, 2),
        "seconds": round(generation.seconds, 1),
        "passing_tests": sum(len(tests) for tests in generation.passed.values()),
        "excluded_test_files": generation.excluded_files,
    }


def write_tasks(generation: Generation, out: str | Path, *, split: str = "test", seed: int = 0) -> list[str]:
    """Write one Harbor task folder per kept bug into ``out`` (which must not exist or be empty).

    Raises:
        RepoTaskError: ``out`` holds files, or no bug was kept.
    """
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RepoTaskError(f"{out}: exists and is not empty; choose a new folder (nothing was written)")
    if not generation.bugs:
        rejected = ", ".join(f"{count} {reason}" for reason, count in sorted(generation.rejected.items()))
        raise RepoTaskError(
            f"{generation.project.name}: no candidate bug was caught by its tests "
            f"({generation.tried} tried: {rejected or 'no candidates in tested functions'}); nothing was written"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        rng = random.Random(seed)
        ids = []
        for bug in generation.bugs:
            task_id, files = _task_files(generation, bug, split, rng)
            ids.append(task_id)
            for path, text in files.items():
                target = staging / task_id / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                if path.endswith(".sh"):
                    target.chmod(0o755)
        (staging / "manifest.json").write_text(json.dumps(_manifest(generation, split, seed, ids), indent=1) + "\n")
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ids
