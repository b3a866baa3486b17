"""Build the self-contained HTML report of run files and training logs.

The page needs no server and no network: CSS, script, plots (inline SVG from matplotlib)
and every trajectory (one zlib-compressed JSON blob per group, expanded when opened) are
inside the file. Run files are streamed, so memory grows with the number of trajectories
(a few numbers each), not with the size of the run file. Training logs (told apart from
run files by their first line) are drawn as curves in a ``training`` view of the same page.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import IO, Any

from rolloutgym_protocol.errors import ConfigError, writing_output

from ..runs.training_log import TrainingLog, TrainingLogError, file_kind, read_training_log
from . import _plots
from ._collect import RunDigest, collect_run
from ._html import asset, comparison_rows, json_script, run_label, run_section
from ._training import log_labels, training_section

__all__ = ["ReportResult", "build_report", "build_training_report", "default_report_path"]


@dataclass(frozen=True)
class ReportResult:
    """What :func:`build_report` wrote.

    Attributes:
        path: the HTML file.
        runs: the digests of the runs (summary, per-task index), in report order.
        bytes: the size of the HTML file.
        seconds: how long building took.
        training_logs: the training logs drawn in the training view, in report order.
    """

    path: Path
    runs: tuple[RunDigest, ...]
    bytes: int
    seconds: float
    training_logs: tuple[TrainingLog, ...] = ()

    @property
    def num_trajectories(self) -> int:
        return sum(run.summary.num_trajectories for run in self.runs)


def default_report_path(run_paths: list[Path]) -> Path:
    """``run.html`` next to a single run; ``a-vs-b.html`` next to the first of several."""
    if not run_paths:
        raise ConfigError(
            "no files given; pass at least one run file written by 'rolloutgym run' or a training log "
            "(OUT/training_log.jsonl of 'rolloutgym train')"
        )
    first = run_paths[0]
    if len(run_paths) == 1:
        return first.with_suffix(".html")
    stems = "-vs-".join(path.stem for path in run_paths[:4])
    return first.with_name(f"{stems[:120]}.html")


def _comparable(baseline: RunDigest, other: RunDigest) -> bool:
    env_a, env_b = baseline.header.get("env", {}), other.header.get("env", {})
    return (env_a.get("id"), env_a.get("version")) == (env_b.get("id"), env_b.get("version"))


def _compare_section(digests: list[RunDigest], hidden: bool) -> tuple[str, list[dict[str, object]]]:
    baseline = digests[0]
    parts = [
        f'<section class="view" id="compare"{" hidden" if hidden else ""}><div class="run-title">Comparison with the '
        f"baseline: {escape(run_label(baseline))}</div>"
    ]
    comparisons: list[dict[str, object]] = []
    for number, other in enumerate(digests[1:], start=1):
        label = f"{run_label(baseline)} → {run_label(other)}"
        parts.append(f"<h2>{escape(label)}</h2>")
        if not _comparable(baseline, other):
            parts.append(
                f'<div class="warning">Not compared: run {number + 1} is of '
                f"{escape(str(other.header['env'].get('id')))} "
                f"v{escape(str(other.header['env'].get('version')))} and the baseline of "
                f"{escape(str(baseline.header['env'].get('id')))} "
                f"v{escape(str(baseline.header['env'].get('version')))}; different environments or versions have "
                "different tasks or grading.</div>"
            )
            continue
        rows = comparison_rows(baseline, other)
        paired = [row for row in rows if row["delta_pass"] is not None]
        a, b = baseline.summary, other.summary
        parts.append(
            f'<p data-field="overall-delta" data-value="{b.pass_rate - a.pass_rate!r}">overall pass rate '
            f"{a.pass_rate:.1%} → {b.pass_rate:.1%} "
            f"({b.pass_rate - a.pass_rate:+.1%}); mean reward {a.mean_reward:.3f} → {b.mean_reward:.3f} "
            f"({b.mean_reward - a.mean_reward:+.3f})</p>"
        )
        parts.append(
            "<figure>"
            + _plots.delta_svg(
                [str(row["task_id"]) for row in paired],
                [float(row["delta_pass"]) for row in paired],
                f"run {number + 1} − baseline",
            )  # type: ignore[arg-type]
            + "</figure>"
        )
        parts.append(f'<div id="compare-table-{number}"></div>')
        comparisons.append({"id": number, "rows": rows})
    parts.append("</section>")
    return "\n".join(parts), comparisons


def _run_data(digest: RunDigest) -> dict[str, object]:
    header = digest.header
    return {
        "path": str(digest.path),
        "header": {
            "env": header.get("env"),
            "policy": header.get("policy"),
            "num_rollouts": header.get("num_rollouts"),
            "pass_threshold": float(header.get("pass_threshold", 1.0)),
            "run_id": header.get("run_id"),
        },
        "summary": {key: value for key, value in digest.summary.to_dict().items() if key != "tasks"},
        "tasks": digest.tasks,
        "errors": digest.errors,
    }


def build_report(
    run_paths: Sequence[str | Path], out: str | Path | None = None, *, title: str | None = None
) -> ReportResult:
    """Write the HTML report of ``run_paths`` to ``out`` and return what was written.

    Args:
        run_paths: run files written by ``rolloutgym run`` and/or training logs (see
            :func:`rolloutgym.runs.read_training_log`), told apart by their first line. The
            first run is the baseline of the comparison view when there are several; the
            training logs share one ``training`` view, one plot per metric.
        out: the HTML file (default: :func:`default_report_path`). Written atomically.
        title: the page title (default: the env ids and policies, or the logs).

    Raises:
        RunFileError: a run file is missing or corrupt.
        TrainingLogError: a training log is malformed (the message names ``file:line``).
        ConfigError: no files, a file that is neither, or matplotlib (the ``report`` extra) is not installed.
    """
    started = time.perf_counter()
    paths = [Path(path) for path in run_paths]
    target = Path(out) if out is not None else default_report_path(paths)
    if target.suffix.lower() in {".jsonl", ".json"} and target.resolve() in {path.resolve() for path in paths}:
        raise ConfigError(f"refusing to overwrite the input file {target} with the report; pass -o report.html")
    runs = [path for path in paths if file_kind(path) == "run"]
    logs = [read_training_log(path) for path in paths if path not in runs]
    _plots._matplotlib()  # fail before reading gigabytes when the extra is missing
    with writing_output(target, what="the report", inputs=paths):
        digests = _build_into(target, runs, logs, title)
    seconds = time.perf_counter() - started
    return ReportResult(target, tuple(digests), target.stat().st_size if target.is_file() else 0, seconds, tuple(logs))


def _build_into(target: Path, runs: list[Path], logs: list[Any], title: str | None) -> list[RunDigest]:
    """Write the page to ``target``: through a temporary file and a rename, or straight into a
    target that exists and is not a regular file (a device or pipe is never replaced by a file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.parent if not target.exists() or target.is_file() else None
    with tempfile.TemporaryFile("w+", encoding="ascii", dir=scratch, prefix=".rolloutgym-report-") as blobs:
        digests = [collect_run(path, blobs, run_number=number) for number, path in enumerate(runs)]
        tabs, sections, comparisons = _run_views(digests)
        if logs:
            sections.append(training_section(logs, hidden=bool(digests)))
            selected = str(not digests).lower()
            tabs += f'<button type="button" data-view="training" aria-selected="{selected}">training</button>'
        data: dict[str, Any] = {
            "runs": [_run_data(digest) for digest in digests],
            "comparisons": comparisons,
        }
        if scratch is None:
            _write_page(target, title or _default_title(digests, logs), tabs, sections, data, blobs)
            return digests
        temporary = target.with_name(f".{target.name}.tmp")
        try:
            _write_page(temporary, title or _default_title(digests, logs), tabs, sections, data, blobs)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        os.replace(temporary, target)
    return digests


def build_training_report(
    logs: Sequence[str | Path], out: str | Path | None = None, *, title: str | None = None
) -> ReportResult:
    """:func:`build_report` of training logs only (``rolloutgym train report``): a run file is an error.

    ``out`` defaults to the first log with ``.html``.
    """
    if not logs:
        raise ConfigError("give at least one training log (OUT/training_log.jsonl of 'rolloutgym train')")
    for path in logs:
        if not Path(path).is_file():
            raise TrainingLogError(f"no training log '{path}' (no such file)")
        if file_kind(path) == "run":
            raise ConfigError(
                f"{path} is a run file, not a training log; draw run files (and training logs) with "
                f"'rolloutgym report {path}'"
            )
    return build_report(logs, out if out is not None else Path(logs[0]).with_suffix(".html"), title=title)


def _default_title(digests: list[RunDigest], logs: list[TrainingLog]) -> str:
    parts = [f"{digest.header['env']['id']} · {digest.header.get('policy')}" for digest in digests]
    if logs:
        parts.append("training: " + ", ".join(log_labels(logs)))
    return " vs ".join(parts)


def _run_views(digests: list[RunDigest]) -> tuple[str, list[str], list[dict[str, object]]]:
    """The tab buttons, ``<section>``s and comparison data of the runs."""
    sections = []
    for number, digest in enumerate(digests):
        summary = digest.summary
        threshold = float(digest.header.get("pass_threshold", 1.0))
        plots = [
            _plots.reward_histogram_svg(digest.rewards, threshold),
            _plots.pass_at_k_svg(summary.pass_at, summary.pass_hat),
            _plots.task_pass_rate_svg(
                [task.task_id for task in summary.tasks], [task.pass_rate for task in summary.tasks]
            ),
        ]
        sections.append(run_section(number, digest, plots, hidden=number != 0))
    comparisons: list[dict[str, object]] = []
    if len(digests) > 1:
        compare_html, comparisons = _compare_section(digests, hidden=True)
        sections.append(compare_html)
    tabs = "".join(
        f'<button type="button" data-view="run-{number}" '
        f'aria-selected="{str(number == 0).lower()}">{escape(run_label(digest))}</button>'
        for number, digest in enumerate(digests)
    )
    if len(digests) > 1:
        tabs += '<button type="button" data-view="compare" aria-selected="false">compare</button>'
    return tabs, sections, comparisons


def _write_page(path: Path, title: str, tabs: str, sections: list[str], data: dict[str, Any], blobs: IO[str]) -> None:
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    with path.open("w", encoding="utf-8") as page:
        page.write(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<link rel="icon" href="data:,">'  # no favicon request, from disk or from 'view'
            f'<meta name="generator" content="rolloutgym report"><title>{escape(title)}</title>'
            f"<style>{asset('report.css')}</style></head>\n<body>\n"
            f'<header class="top"><h1>rolloutgym report</h1><nav>{tabs}</nav><span class="generated">generated '
            f"{generated}</span></header>\n"
            f"<main>{''.join(sections)}</main>\n"
        )
        page.write(json_script("rg-data", data))
        page.write(f"\n<script>{asset('report.js')}</script>\n")
        blobs.seek(0)
        shutil.copyfileobj(blobs, page, length=1 << 20)
        page.write("</body></html>\n")
