"""``rolloutgym tasks make-repo``: the command this plugin adds through ``rolloutgym_commands``.

Only typer is imported here; the generator loads when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

__all__ = ["register"]

tasks_app = typer.Typer(
    name="tasks",
    help="Make task sets: bugs in real Python packages, graded by their own tests (make-repo).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def register(cli: Any) -> None:
    """Add the ``tasks`` group to the ``rolloutgym`` typer app."""
    cli.add_typer(tasks_app, name="tasks")


@tasks_app.command("make-repo")
def make_repo(
    package: str = typer.Argument(..., help="NAME, NAME==VERSION (PyPI's sdist), an sdist file or a local folder."),
    out: Path = typer.Option(..., "--out", help="A new folder: one Harbor task folder per kept bug."),
    seed: int = typer.Option(0, "--seed", help="The candidates' order (same seed, same tasks)."),
    max_tasks: int = typer.Option(25, "--max-tasks", min=1, help="Stop after this many kept bugs."),
    max_candidates: int = typer.Option(
        None, "--max-candidates", min=1, help="Try at most this many candidates (default: 4 x --max-tasks)."
    ),
    split: str = typer.Option("test", "--split", help="The split of every task: train, dev or test."),
    sandbox: str = typer.Option("bwrap", "--sandbox", help="The sandbox provider the tests run in."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the summary."),
) -> None:
    """Make SWE-style tasks from a Python package: bugs its own tests catch, one task folder each.

    Run them with `rolloutgym run OUT --policy oracle`; OUT is a folder of Harbor tasks.
    """
    from . import RepoTaskError, make_repo_tasks

    progress = None if quiet else (lambda line: typer.echo(line, err=True))
    try:
        generation = make_repo_tasks(
            package,
            out,
            seed=seed,
            max_tasks=max_tasks,
            max_candidates=max_candidates,
            split=split,
            provider=sandbox,
            progress=progress,
        )
    except RepoTaskError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    share = len(generation.bugs) / generation.tried if generation.tried else 0.0
    typer.echo(
        f"{len(generation.bugs)} task(s) from {generation.project.name} {generation.project.version} in {out} "
        f"({generation.tried} candidates tried, {share:.0%} kept, {generation.seconds:.0f} s); "
        f"run them: rolloutgym run {out} --policy oracle"
    )
