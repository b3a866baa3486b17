"""Real repositories as tasks: ``rolloutgym tasks make-repo PACKAGE --out DIR``.

A Python project's sdist (or a local checkout) is run in a sandbox to find its passing tests;
candidate bugs are made by the procedural modifications of SWE-smith (:mod:`.mutate`); a bug
is kept when its module imports and some passing test fails (:mod:`.generate`); each kept bug
becomes a Harbor task folder graded by the project's own tests in a separate verifier sandbox
(:mod:`.writer`). The shipped family ``code/repo-bugs-v0`` is built this way (:mod:`.family`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .generate import Bug, Generation, generate_bugs
from .mutate import OPERATORS, CodeMutation, apply_mutation, find_mutations, normalised_hash
from .project import Project, RepoTaskError, load_project
from .writer import write_tasks

__all__ = [
    "OPERATORS",
    "Bug",
    "Generation",
    "CodeMutation",
    "Project",
    "RepoTaskError",
    "apply_mutation",
    "find_mutations",
    "generate_bugs",
    "load_project",
    "make_repo_tasks",
    "normalised_hash",
    "write_tasks",
]


def make_repo_tasks(
    spec: str,
    out: str | Path,
    *,
    seed: int = 0,
    max_tasks: int = 25,
    max_candidates: int | None = None,
    split: str = "test",
    provider: str = "bwrap",
    progress: Callable[[str], None] | None = None,
) -> Generation:
    """Make up to ``max_tasks`` tasks from ``spec`` (``NAME``, ``NAME==VERSION`` or a folder) into ``out``.

    Raises:
        RepoTaskError: the project cannot give tasks (one line: why); nothing is written then.
    """
    if split not in ("train", "dev", "test"):
        raise RepoTaskError(f"split {split!r}: use train, dev or test")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RepoTaskError(f"{out}: exists and is not empty; choose a new folder")
    project = load_project(spec)
    generation = generate_bugs(
        project, seed=seed, max_tasks=max_tasks, max_candidates=max_candidates, provider=provider, progress=progress
    )
    write_tasks(generation, out, split=split, seed=seed)
    return generation
