"""Training curves: a self-contained HTML page from training logs (``rolloutgym train report``).

One plot per logged metric that varies (reward with its per-step spread, pass rate, loss,
KL, entropy, seconds per step), every log on the same axes so runs compare at a glance,
and the before/after evaluation table. Plots are matplotlib SVGs inlined in the page.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ._logging import read_training_log

__all__ = ["METRICS", "build_curves_report"]

METRICS = (
    ("reward", "mean reward"),
    ("rolloutgym/pass_rate", "pass rate"),
    ("loss", "loss"),
    ("kl", "KL to the reference"),
    ("entropy", "entropy"),
    ("completions/mean_length", "sampled tokens per episode"),
    ("seconds", "seconds per step"),
)


def _series(records: list[dict[str, Any]], key: str) -> tuple[list[float], list[float]]:
    steps, values = [], []
    for record in records:
        value = record.get(key)
        if (
            record.get("event")
            or not isinstance(value, (int, float))
            or not isinstance(record.get("step"), (int, float))
        ):
            continue
        steps.append(float(record["step"]))
        values.append(float(value))
    return steps, values


def _svg(figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 style="width:100%;height:auto"', text, count=1)


def _plot(key: str, label: str, logs: list[tuple[str, list[dict[str, Any]]]]) -> str | None:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5.6, 3.0), layout="constrained")
    axes = figure.add_subplot()
    drawn = False
    for name, records in logs:
        steps, values = _series(records, key)
        if len(values) < 2 or (key in ("kl",) and not any(values)):
            continue
        axes.plot(steps, values, marker="o", markersize=2.5, linewidth=1.4, label=name)
        if key == "reward":
            _, spread = _series(records, "reward_std")
            if len(spread) == len(values):
                low = [value - deviation for value, deviation in zip(values, spread, strict=True)]
                high = [value + deviation for value, deviation in zip(values, spread, strict=True)]
                axes.fill_between(steps, low, high, alpha=0.15)
        drawn = True
    if not drawn:
        return None
    axes.set_title(label, fontsize=10)
    axes.set_xlabel("step", fontsize=9)
    axes.grid(True, alpha=0.3)
    if len(logs) > 1:
        axes.legend(fontsize=8)
    return _svg(figure)


def _evaluation_rows(name: str, records: list[dict[str, Any]]) -> str:
    rows = []
    for record in records:
        if record.get("event") != "evaluation":
            continue
        for moment in ("before", "after"):
            rows.append(
                "<tr>"
                + "".join(
                    f"<td>{html.escape(str(value))}</td>"
                    for value in (
                        name,
                        moment,
                        record.get(f"{moment}/policy"),
                        record.get(f"{moment}/split"),
                        record.get(f"{moment}/num_trajectories"),
                        f"{float(record.get(f'{moment}/pass_rate') or 0):.1%}",
                        f"{float(record.get(f'{moment}/mean_reward') or 0):.3f}",
                    )
                )
                + "</tr>"
            )
    return "".join(rows)


def build_curves_report(logs: Sequence[str | Path], out: str | Path | None = None, *, title: str | None = None) -> Path:
    """Write the HTML page of ``logs`` (training logs written by ``rolloutgym train``); returns its path."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ConfigError("training curves are drawn with matplotlib: pip install matplotlib") from None
    if not logs:
        raise ConfigError("give at least one training log (OUT/training_log.jsonl of 'rolloutgym train')")
    loaded: list[tuple[str, list[dict[str, Any]]]] = []
    headers = []
    for path in logs:
        if not Path(path).is_file():
            raise ConfigError(f"no training log '{path}'")
        try:
            header, records = read_training_log(path)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        name = f"{header.get('trainer', '?')} {Path(path).parent.name or Path(path).stem}"
        loaded.append((name, records))
        headers.append((name, header))
    plots = [svg for key, label in METRICS if (svg := _plot(key, label, loaded)) is not None]
    evaluation = "".join(_evaluation_rows(name, records) for name, records in loaded)
    settings = "".join(_settings_row(name, header) for name, header in headers)
    evaluation = evaluation or '<tr><td colspan="7">no evaluation in these logs</td></tr>'
    heading = html.escape(title or "Training curves")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>{heading}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem;color:#1e293b}}
.grid{{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:1rem}}
table{{border-collapse:collapse;margin:1rem 0}}
td,th{{border:1px solid #e2e8f0;padding:.3rem .6rem;font-size:.9rem}}</style></head>
<body><h1>{heading}</h1>
<h2>Before and after</h2><table>
<tr><th>run</th><th></th><th>policy</th><th>split</th><th>episodes</th><th>pass rate</th><th>mean reward</th></tr>
{evaluation}</table>
<h2>Curves</h2><div class="grid">{"".join(f"<div>{svg}</div>" for svg in plots)}</div>
<h2>Settings</h2><table>{settings}</table></body></html>
"""
    target = Path(out) if out is not None else Path(logs[0]).with_suffix(".html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target


def _settings_row(name: str, header: dict[str, Any]) -> str:
    shown = {key: value for key, value in header.items() if key != "rolloutgym_training_log"}
    return f"<tr><td>{html.escape(name)}</td><td><code>{html.escape(str(shown))}</code></td></tr>"
