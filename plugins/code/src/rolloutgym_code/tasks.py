"""The shipped task sets ``code/pybugs-v0`` and ``code/pyfunc-v0``, read from package data.

Each task is a folder ``data/<set>/<NN>-<slug>/`` holding ``task.json`` (id, split,
instruction, category, skills; checked on load: a missing, unknown or mistyped field is an
error naming the file and the field), ``repo/`` (the repository the agent starts from), ``fix/``
(the fixed versions of the files the reference solution changes) and ``hidden/`` (hidden
tests, at the paths they get in the repository). The reference patch is the unified diff
from ``repo/`` to ``repo/`` + ``fix/``; the oracle applies it with the ``apply_patch`` tool.
"""

from __future__ import annotations

import difflib
import functools
from importlib.resources import files as package_files
from importlib.resources.abc import Traversable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rolloutgym_protocol.errors import ConfigError

from .envs import CodeTask, visible_test_paths

__all__ = ["TaskMeta", "load_task_folder", "pybugs_tasks", "pyfunc_tasks", "reference_diff"]


class TaskMeta(BaseModel):
    """``task.json`` of a task folder: unknown fields are errors, values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: str
    split: Literal["train", "dev", "test"]
    instruction: str
    category: str | None = None
    skills: list[str] = Field(default_factory=list)


def _read_meta(folder: Traversable) -> TaskMeta:
    path = folder.joinpath("task.json")
    try:
        return TaskMeta.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        if problem["type"] == "json_invalid":
            raise ConfigError(f"{path}: not valid JSON ({problem['msg']}); fix the file") from None
        field = ".".join(str(part) for part in problem["loc"]) or "(the object)"
        raise ConfigError(
            f"{path}: field {field!r}: {problem['msg']}; fix the file (task.json has the fields "
            f"{', '.join(TaskMeta.model_fields)})"
        ) from None


def _read_tree(folder: Traversable, prefix: str = "") -> dict[str, str]:
    found: dict[str, str] = {}
    if not folder.is_dir():
        return found
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.name == "__pycache__":
            continue
        path = f"{prefix}{entry.name}"
        if entry.is_dir():
            found.update(_read_tree(entry, path + "/"))
        else:
            found[path] = entry.read_text(encoding="utf-8")
    return found


def reference_diff(before: dict[str, str], after: dict[str, str | None]) -> str:
    """A unified diff (``a/``, ``b/`` prefixes) turning ``before`` into ``before`` + ``after``."""
    chunks = []
    for path in sorted(after):
        old = before.get(path)
        new = after[path]
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile="/dev/null" if old is None else f"a/{path}",
                tofile="/dev/null" if new is None else f"b/{path}",
            )
        )
    return "".join(chunks)


def load_task_folder(folder: Traversable) -> CodeTask:
    """Read one task folder (see the module docstring)."""
    meta = _read_meta(folder)
    repository = _read_tree(folder.joinpath("repo"))
    fix = _read_tree(folder.joinpath("fix"))
    hidden = _read_tree(folder.joinpath("hidden"))
    return CodeTask(
        id=meta.id,
        split=meta.split,
        instruction=meta.instruction,
        files=repository,
        hidden_tests=hidden,
        visible_tests=visible_test_paths(repository),
        reference_patch=reference_diff(repository, dict(fix)),
        metadata={"category": meta.category, "skills": list(meta.skills), "changed_files": sorted(fix)},
    )


def _load_set(name: str) -> list[CodeTask]:
    base = package_files("rolloutgym_code").joinpath("data", name)
    folders = sorted((entry for entry in base.iterdir() if entry.is_dir()), key=lambda entry: entry.name)
    return [load_task_folder(folder) for folder in folders]


@functools.cache
def _pybugs() -> tuple[CodeTask, ...]:
    return tuple(_load_set("pybugs-v0"))


@functools.cache
def _pyfunc() -> tuple[CodeTask, ...]:
    return tuple(_load_set("pyfunc-v0"))


def pybugs_tasks() -> list[CodeTask]:
    """Small Python projects with one realistic bug each, graded by hidden pytest tests."""
    return list(_pybugs())


def pyfunc_tasks() -> list[CodeTask]:
    """Implement a function from its docstring and visible examples, graded by hidden tests."""
    return list(_pyfunc())
