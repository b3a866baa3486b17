"""The report's training view: curves of training logs (one plot per metric, every log on the same axes).

A metric whose values are all equal (``kl`` of 0 at every step) is listed in a table instead of
drawn as a flat line; a metric ``K`` with a ``K_std`` companion is drawn with a ±std band.
Numbers carry their exact values in ``data-*`` attributes, as in the rest of the report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from ..runs.training_log import TrainingLog, is_number
from . import _plots

__all__ = ["log_labels", "ordered_metrics", "training_section"]

# Metrics drawn first when a log has them (matched on the last part of the name: rolloutgym/pass_rate).
_HEADLINE = ("reward", "pass_rate", "pass", "loss", "kl", "entropy")
_STD_SUFFIX = "_std"
# What the common metric names measure (TRL's names and rolloutgym's), shown under their plots.
_DESCRIPTIONS = {
    "reward": "mean reward of the step's episodes (band: ± its standard deviation)",
    "pass_rate": "share of the step's episodes that pass",
    "loss": "training loss",
    "kl": "KL divergence to the reference model",
    "entropy": "mean entropy of the sampled tokens",
    "completions/mean_length": "sampled tokens per episode",
    "seconds": "wall-clock seconds per logged step",
    "cpu_seconds": "CPU seconds per logged step (all threads)",
}
_NO_CURVES = '<p class="muted">No metric changes over the logged steps.</p>'


def log_labels(logs: Sequence[TrainingLog]) -> list[str]:
    """A short, distinct name per log: the trainer and the log's folder, else the path."""
    labels = []
    for log in logs:
        where = f"{log.path.parent.name}/{log.path.name}" if log.path.parent.name else log.path.name
        trainer = log.header.get("trainer")
        labels.append(f"{trainer} · {where}" if isinstance(trainer, str) and trainer else where)
    if len(set(labels)) < len(labels):
        labels = [str(log.path) for log in logs]
    return labels


def ordered_metrics(logs: Sequence[TrainingLog]) -> list[str]:
    """Every metric of ``logs``: headline metrics first, then in the order the logs first name them.

    A ``K_std`` metric whose ``K`` is also logged is left out: it is drawn as ``K``'s band.
    """
    seen: dict[str, None] = {}
    for log in logs:
        for metric in log.metrics:
            seen.setdefault(metric)
    names = [name for name in seen if not (name.endswith(_STD_SUFFIX) and name[: -len(_STD_SUFFIX)] in seen)]

    def rank(name: str) -> int:
        last = name.rsplit("/", 1)[-1]
        return next((index for index, headline in enumerate(_HEADLINE) if last == headline), len(_HEADLINE))

    return sorted(names, key=rank)  # stable: first-seen order within a rank


def _spread(log: TrainingLog, metric: str, steps: list[float]) -> list[float] | None:
    spread_steps, spread = log.series(metric + _STD_SUFFIX)
    return spread if spread_steps == steps and spread else None


def _metric_lines(
    logs: Sequence[TrainingLog], labels: Sequence[str], metric: str
) -> list[tuple[str, list[float], list[float], list[float] | None]]:
    lines = []
    for log, label in zip(logs, labels, strict=True):
        steps, values = log.series(metric)
        if values:
            lines.append((label, steps, values, _spread(log, metric, steps)))
    return lines


def _figure(metric: str, lines: list[tuple[str, list[float], list[float], list[float] | None]]) -> str:
    series = {
        label: [[step, value] for step, value in zip(steps, values, strict=True)] for label, steps, values, _ in lines
    }
    known = _DESCRIPTIONS.get(metric) or _DESCRIPTIONS.get(metric.rsplit("/", 1)[-1])
    caption = f'<figcaption class="muted">{escape(known)}</figcaption>' if known else ""
    return (
        f'<figure data-metric="{escape(metric, quote=True)}" data-series="{escape(json.dumps(series), quote=True)}">'
        f"{_plots.training_curve_svg(metric, lines)}{caption}</figure>"
    )


def _cell(key: str, value: Any) -> str:
    if key.endswith("pass_rate") and is_number(value):
        return f'<td data-value="{value!r}">{value:.1%}</td>'
    if is_number(value):
        return f'<td data-value="{value!r}">{value:.4g}</td>'
    return f"<td>{escape(str(value if value is not None else '-'))}</td>"


def _logs_table(logs: Sequence[TrainingLog], labels: Sequence[str]) -> str:
    rows = []
    for log, label in zip(logs, labels, strict=True):
        steps = log.steps
        last = steps[-1]["step"] if steps else "-"
        settings = ", ".join(f"{key}={value}" for key, value in log.header.items())
        rows.append(
            f'<tr data-log="{escape(label, quote=True)}"><td>{escape(label)}</td><td>{escape(str(log.path))}</td>'
            f'<td data-field="steps" data-value="{len(steps)}">{len(steps)}</td><td>{escape(str(last))}</td>'
            f'<td class="message">{escape(settings) or "-"}</td></tr>'
        )
    return (
        '<table class="training-logs" data-field="training_logs"><thead><tr><th>log</th><th>file</th>'
        "<th>steps</th><th>last step</th><th>header</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def _evaluation_table(logs: Sequence[TrainingLog], labels: Sequence[str]) -> str:
    """``"event": "evaluation"`` lines (``before/KEY``, ``after/KEY``): one row per log and moment."""
    found = [
        (label, event)
        for log, label in zip(logs, labels, strict=True)
        for event in log.events
        if event["event"] == "evaluation"
    ]
    if not found:
        return ""
    columns: dict[str, None] = {}
    for _, event in found:
        for key in event:
            if "/" in key and key.split("/", 1)[0] in ("before", "after"):
                columns.setdefault(key.split("/", 1)[1])
    head = "".join(f"<th>{escape(column.replace('_', ' '))}</th>" for column in columns)
    rows = "".join(
        f'<tr data-moment="{moment}"><td>{escape(label)}</td><td>{moment}</td>'
        + "".join(_cell(column, event.get(f"{moment}/{column}")) for column in columns)
        + "</tr>"
        for label, event in found
        for moment in ("before", "after")
    )
    return (
        '<h2>Before and after</h2><table class="evaluation" data-field="evaluation"><thead><tr><th>log</th><th></th>'
        f"{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def _constants_table(constants: list[tuple[str, float]]) -> str:
    if not constants:
        return ""
    rows = "".join(
        f'<tr data-metric="{escape(metric, quote=True)}"><td>{escape(metric)}</td>{_cell(metric, value)}</tr>'
        for metric, value in constants
    )
    return (
        '<h2>Constant metrics</h2><p class="muted">The same value at every logged step of every log.</p>'
        f'<table class="constants" data-field="constant_metrics"><tbody>{rows}</tbody></table>'
    )


def _events_table(logs: Sequence[TrainingLog], labels: Sequence[str]) -> str:
    rows = "".join(
        f'<tr data-event="{escape(event["event"], quote=True)}"><td>{escape(label)}</td>'
        f"<td>{escape(event['event'])}</td><td>{escape(str(event.get('step', '-')))}</td>"
        f'<td class="message">'
        + escape(", ".join(f"{key}={value}" for key, value in event.items() if key not in ("event", "step")))
        + "</td></tr>"
        for log, label in zip(logs, labels, strict=True)
        for event in log.events
        if event["event"] != "evaluation"
    )
    if not rows:
        return ""
    return (
        '<h2>Events</h2><table class="events" data-field="events"><thead><tr><th>log</th><th>event</th><th>step</th>'
        f"<th>values</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def training_section(logs: Sequence[TrainingLog], *, hidden: bool) -> str:
    """The ``<section id="training">``: the logs, before/after, one plot per metric, constants, events."""
    labels = log_labels(logs)
    figures, constants = [], []
    for metric in ordered_metrics(logs):
        lines = _metric_lines(logs, labels, metric)
        values = {value for _, _, line_values, _ in lines for value in line_values}
        if len(values) == 1 and sum(len(line_values) for _, _, line_values, _ in lines) > 1:
            constants.append((metric, values.pop()))
        else:
            figures.append(_figure(metric, lines))
    empty = [label for log, label in zip(logs, labels, strict=True) if not log.steps]
    warning = f'<div class="warning">No steps logged yet in: {escape(", ".join(empty))}.</div>' if empty else ""
    return (
        f'<section class="view" id="training"{" hidden" if hidden else ""}>'
        f'<div class="run-title">Training: {len(logs)} log(s)</div>{warning}'
        f"{_logs_table(logs, labels)}{_evaluation_table(logs, labels)}"
        f'<h2>Curves</h2><div class="plots">{"".join(figures)}</div>{"" if figures else _NO_CURVES}'
        f"{_constants_table(constants)}{_events_table(logs, labels)}</section>"
    )
