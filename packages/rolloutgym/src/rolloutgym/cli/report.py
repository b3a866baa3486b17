"""``rolloutgym report`` and ``rolloutgym view``: the HTML report of run files and training logs."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional

import typer

from ._app import app, console, error_console, fail, output_path


def _build(run_files: list[Path], out: Optional[Path], title: Optional[str]) -> Path:
    from ..report import build_report
    from ..runs import file_kind
    from .platform import local_run_file
    from .runs import torn_tail, warn_torn_tail

    if out is None and run_files and not run_files[0].exists() and local_run_file(run_files[0]) != run_files[0]:
        out = Path(f"{run_files[0].name}.html")  # a remote run id first: the report goes to the current folder
    run_files = [local_run_file(run_file) for run_file in run_files]  # remote run ids: downloaded on demand
    for run_file in run_files:
        if file_kind(run_file) == "run" and torn_tail(run_file):
            warn_torn_tail(run_file)
    result = build_report(run_files, out, title=title)
    megabytes = result.bytes / 1e6
    contents = [f"{result.num_trajectories} trajectories from {len(result.runs)} run(s)"] if result.runs else []
    contents += [f"{len(result.training_logs)} training log(s)"] if result.training_logs else []
    console.print(f"wrote {result.path} ({', '.join(contents)}, {megabytes:.1f} MB, {result.seconds:.1f} s)")
    for digest in result.runs:
        summary = digest.summary
        console.print(
            f"  {digest.path.name}: {digest.header['env']['id']} · policy {digest.header.get('policy')} · "
            f"pass rate {summary.pass_rate:.1%} · mean reward {summary.mean_reward:.3f} · errors {summary.num_errors}"
        )
    for log in result.training_logs:
        steps = log.steps
        last = f" to step {steps[-1]['step']}" if steps else ""
        console.print(
            f"  {log.path.name}: training log · {len(steps)} step(s){last} · metrics "
            f"{', '.join(log.metrics) or 'none'}",
            markup=False,
        )
    return result.path


@app.command("report")
def report_command(
    run_files: list[Path] = typer.Argument(
        ...,
        help="Run files and/or training logs (told apart by content); the first run is the baseline of the "
        "comparison, training logs are drawn as curves.",
    ),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="The HTML file to write (default: RUN.html next to the first run)."
    ),
    title: Optional[str] = typer.Option(None, "--title", help="The page title."),
) -> None:
    """Write a self-contained HTML report: run files (summary, plots, tasks, trajectories), training logs (curves)."""
    if out is not None:
        output_path(out, "--out")
    path = _build(run_files, out, title)
    console.print(f"open it in a browser: {path.resolve().as_uri()}")


@app.command("view")
def view_command(
    run_files: list[Path] = typer.Argument(
        ..., help="Run files and/or training logs (or an existing .html report) to view."
    ),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Keep the report at this path (default: a temporary file)."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to serve on (loopback by default)."),
    port: int = typer.Option(0, "--port", help="Port to serve on; 0 picks a free one."),
    no_open: bool = typer.Option(False, "--no-open", help="Do not open a browser; just print the URL."),
    title: Optional[str] = typer.Option(None, "--title", help="The page title."),
) -> None:
    """Build the report and serve it on 127.0.0.1, opening it in the browser; Ctrl-C stops."""
    from ..report import ReportServer

    with tempfile.TemporaryDirectory(prefix="rolloutgym-view-") as folder:
        if len(run_files) == 1 and run_files[0].suffix.lower() in {".html", ".htm"}:
            if not run_files[0].is_file():
                fail(
                    f"report '{run_files[0]}' does not exist; build one with 'rolloutgym report RUN -o {run_files[0]}'"
                )
            path = run_files[0]
        else:
            path = _build(run_files, out or Path(folder) / "report.html", title)
        try:
            server = ReportServer(path, host=host, port=port)
        except OSError as exc:
            fail(f"cannot serve on {host}:{port} ({exc.strerror or exc}); pick another --port, or 0 for a free one")
        console.print(f"serving the report at {server.url} (Ctrl-C to stop)")
        if not no_open:
            _open_browser(server.url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            console.print("stopped")
        finally:
            server.stop()


def _open_browser(url: str) -> None:
    """Open ``url`` in the desktop browser; on a machine without a display, say how to reach it."""
    import os
    import sys
    import webbrowser

    # Without a display, webbrowser would start a text browser (lynx, w3m) in this terminal.
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        port = url.rstrip("/").rsplit(":", 1)[-1]
        error_console.print(
            f"no display here, so no browser was opened; from your machine run 'ssh -L {port}:127.0.0.1:{port} HOST' "
            f"and open {url}"
        )
        return
    if not webbrowser.open(url):
        error_console.print(f"could not open a browser here; open {url} yourself")
