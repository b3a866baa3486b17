"""``rolloutgym rescore``, ``export`` and ``runs``: run files as data (re-graded, exported, listed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from ._app import app, console, fail, output_path, print_table
from .runs import _local, torn_tail, warn_torn_tail


def _load(path: Path) -> Any:
    """The whole run in memory (what an exporter reads)."""
    from ..runs import read_run

    path, torn = _local(path)
    run = read_run(path, allow_partial_tail=torn)
    if torn:
        warn_torn_tail(path)
    return run


@app.command("rescore")
def rescore_command(
    run_file: Path = typer.Argument(..., help="The run file to re-grade."),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Where to write the re-graded run (default RUN.rescored.jsonl)."
    ),
    force: bool = typer.Option(False, "--force", help="Replay even if the env does not declare replayable grading."),
) -> None:
    """Re-grade stored trajectories with the current graders, without re-running the policy."""
    from ..rescore import rescore_run

    if out is not None:
        output_path(out, "--out")
    torn = torn_tail(run_file)  # the rule of show, export and report: warn and go on without that task
    if torn:
        warn_torn_tail(run_file)
    result = rescore_run(run_file, out=out, force=force, allow_partial_tail=torn)
    console.print(
        f"re-graded {result.trajectories} trajectories: {result.changed} scores changed, {result.mismatched_replays} "
        "replays diverged"
    )
    console.print(f"run file: {result.path}")


@app.command("export")
def export_command(
    run_file: Path = typer.Argument(..., help="The run file to export."),
    format: str = typer.Option(
        "jsonl", "--format", "-f", help="Export format (see 'rolloutgym plugins'); e.g. tokens, sft, dpo, hf, tinker."
    ),
    out: Optional[Path] = typer.Option(
        None,
        "--out",
        "-o",
        help="Output path (default next to the run file: RUN.FORMAT.EXT, RUN.trajectories.jsonl for jsonl).",
    ),
    options: Optional[list[str]] = typer.Option(None, "--option", help="KEY=VALUE exporter options (repeatable)."),
) -> None:
    """Export a run as training data."""
    from ..registry import get_registry, import_entry_point
    from ._app import parse_key_values

    registry = get_registry()
    spec = registry.exporter(format)
    export = import_entry_point(spec.entry_point, what=f"exporter {format}")
    run = _load(run_file)
    if not run_file.exists():  # a remote run id: the export goes to the current folder, not the download cache
        run_file = Path(run_file.name + ".jsonl")
    # RUN.sft.jsonl, RUN.tokens.jsonl, ...; the default format is named by what it holds (not RUN.jsonl.jsonl).
    kind = "trajectories" if f".{format}" == spec.extension else format
    target = output_path(out or run_file.with_name(f"{run_file.stem}.{kind}{spec.extension}"), "--out")
    existed = target.exists()
    from rolloutgym_protocol.errors import writing_output

    try:
        with writing_output(target, what=f"the {format} export", inputs=[run_file]):
            written = export(run, target, **parse_key_values(options, "--option"))
    except BaseException:
        if not existed and target.is_file():
            target.unlink()  # a failed export leaves no half-written or empty file behind
        raise
    console.print(f"wrote {written}")


@app.command("runs")
def runs_command(
    folder: Path = typer.Argument(Path("runs"), help="Folder of run files (default ./runs)."),
    remote: bool = typer.Option(False, "--remote", help="List the platform's runs instead (see 'rolloutgym login')."),
) -> None:
    """List the run files in a folder: env, policy, date, pass rate, and whether the run is complete."""
    if remote:
        from .platform import runs_remote

        runs_remote()
        return
    from rolloutgym_protocol.errors import RunFileError

    from ..runs import read_run, summarize

    if not folder.is_dir():
        fail(
            f"no folder {folder}: pass the folder that holds your run files (rolloutgym run writes to ./runs by "
            "default)"
        )
    table = Table(title=f"Run files in {folder}", title_justify="left")
    for column in ("file", "env", "policy", "created", "tasks", "pass rate", "state"):
        table.add_column(column, justify="right" if column in ("tasks", "pass rate") else "left")
    found = skipped = 0
    for path in sorted(folder.glob("*.jsonl"), key=lambda candidate: candidate.stat().st_mtime, reverse=True):
        if not _may_be_run_file(path):  # a tasks file, an export: JSON lines, but no run header
            skipped += 1
            continue
        try:
            run = read_run(path, allow_partial_tail=True)
        except (RunFileError, OSError, ValueError) as exc:
            table.add_row(path.name, "-", "-", "-", "-", "-", f"unreadable: {str(exc)[:60]}")
            continue
        found += 1
        summary = summarize(run.groups, header=run.header, task_indices=run.task_indices)
        planned = len(run.header.get("task_indices", ()))
        done = len(set(run.task_indices))
        table.add_row(
            path.name,
            str(run.header.get("env", {}).get("id", "-")),
            str(run.header.get("policy", "-")),
            str(run.header.get("created_at", "-"))[:19].replace("T", " "),
            f"{done}/{planned}",
            f"{summary.pass_rate:.1%}" if summary.num_trajectories else ("none scored" if run.groups else "-"),
            "complete" if run.complete else "partial (--resume to finish)",
        )
    others = f" ({skipped} other .jsonl file(s) without a run header left out: tasks files, exports)" if skipped else ""
    if not found and not table.rows:
        console.print(f"no run files (*.jsonl) in {folder}{others}")
        return
    print_table(table)
    if others:
        console.print(others.strip(" ()"), markup=False)


def _may_be_run_file(path: Path) -> bool:
    """False for JSON lines whose first line is an object but no run header (a tasks file, an export); a damaged
    file (its first line not JSON) may be a run file and is listed as unreadable."""
    import json

    try:
        with path.open("rb") as handle:
            first = json.loads(handle.readline(1 << 20) or b"null")
    except (OSError, ValueError):
        return True
    return not isinstance(first, dict) or first.get("kind") == "header"
