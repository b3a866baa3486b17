"""The report's plots, drawn with matplotlib and written as inline SVG (no network, no images).

matplotlib is the ``report`` extra and is imported here only, when a report is built.
Figures are made with ``matplotlib.figure.Figure`` directly (no pyplot, no global state).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ..install_hints import pip_install

__all__ = ["delta_svg", "pass_at_k_svg", "reward_histogram_svg", "task_pass_rate_svg", "training_curve_svg"]

# With more tasks than this, per-task bars become a sorted profile (one path, not N bars).
# Above these counts, task labels would overlap (7 pt labels on a 5.4 in / 10 in wide plot):
# the plot shows the sorted profile instead, and the task table names the tasks.
_MAX_BARS = 16
_MAX_DELTA_BARS = 30
_PASS_COLOUR = "#2f855a"
_FAIL_COLOUR = "#c53030"
_MAIN_COLOUR = "#3b6fb6"
_SECOND_COLOUR = "#d08c2f"
_STYLE = {
    "svg.fonttype": "none",  # text stays text: smaller, selectable, uses the page's font
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e2e8f0",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
}


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ConfigError(
            "the HTML report draws its plots with matplotlib, which is not installed; "
            f"install it with: {pip_install('rolloutgym', 'report')}"
        ) from None
    return matplotlib


_counter = 0


def _figure(width: float = 5.4, height: float = 2.9) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


def _svg(figure: Any, label: str) -> str:
    """Render ``figure`` to an SVG element that scales with its container."""
    global _counter
    matplotlib = _matplotlib()
    _counter += 1
    buffer = io.StringIO()
    # A distinct hash salt per figure keeps element ids unique when several SVGs share a page.
    with matplotlib.rc_context({**_STYLE, "svg.hashsalt": f"rg{_counter}"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(
        r'<svg([^>]*?) width="[^"]*" height="[^"]*"',
        rf'<svg\1 role="img" aria-label="{label}" class="plot"',
        text,
        count=1,
    )
    return re.sub(r"<metadata>.*?</metadata>", "", text, count=1, flags=re.DOTALL)


def _styled(function: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> str:
        matplotlib = _matplotlib()
        with matplotlib.rc_context(_STYLE):
            return function(*args, **kwargs)

    wrapper.__doc__ = function.__doc__
    wrapper.__name__ = function.__name__
    return wrapper


@_styled
def reward_histogram_svg(rewards: Sequence[float], threshold: float) -> str:
    """Histogram of trajectory rewards (score values), passes in green, the rest in red."""
    figure, axes = _figure()
    if not rewards:
        axes.text(0.5, 0.5, "no trajectories", ha="center", va="center", transform=axes.transAxes)
    else:
        # Rewards usually lie in [0, 1]: keep that frame so runs look alike side by side.
        low, high = min(0.0, min(rewards)), max(1.0, max(rewards))
        bins = 20
        passed = [value for value in rewards if value >= threshold]
        failed = [value for value in rewards if value < threshold]
        axes.hist(
            [failed, passed],
            bins=bins,
            range=(low, high),
            stacked=True,
            color=[_FAIL_COLOUR, _PASS_COLOUR],
            label=[f"below {threshold:g}", "pass"],
        )
        axes.legend(frameon=False, loc="best")
    axes.set_xlabel("reward (score value)")
    axes.set_ylabel("trajectories")
    axes.set_title("Reward distribution", loc="left", fontsize=10)
    return _svg(figure, "reward histogram")


@_styled
def pass_at_k_svg(pass_at: dict[int, float], pass_hat: dict[int, float]) -> str:
    """pass@k and pass^k against k."""
    figure, axes = _figure()
    ks = sorted(pass_at)
    if ks:
        axes.plot(ks, [pass_at[k] for k in ks], marker="o", color=_MAIN_COLOUR, label="pass@k (any of k passes)")
        axes.plot(ks, [pass_hat[k] for k in ks], marker="s", color=_SECOND_COLOUR, label="pass^k (all k pass)")
        axes.set_xticks(ks)
        axes.legend(frameon=False, loc="best")
    else:
        axes.text(0.5, 0.5, "no complete groups", ha="center", va="center", transform=axes.transAxes)
    axes.set_ylim(-0.03, 1.03)
    axes.set_xlabel("k")
    axes.set_ylabel("rate")
    axes.set_title("pass@k and pass^k", loc="left", fontsize=10)
    return _svg(figure, "pass at k curve")


@_styled
def task_pass_rate_svg(task_ids: Sequence[str], pass_rates: Sequence[float]) -> str:
    """Per-task pass rate: labelled bars for a few tasks, a sorted profile for many."""
    figure, axes = _figure()
    if len(task_ids) <= _MAX_BARS:
        positions = range(len(task_ids))
        colours = [
            _PASS_COLOUR if rate >= 1.0 else _FAIL_COLOUR if rate <= 0.0 else _MAIN_COLOUR for rate in pass_rates
        ]
        axes.bar(positions, pass_rates, color=colours, width=0.8)
        # A dot per task keeps 0% tasks visible (a bar of height 0 is not).
        axes.scatter(positions, pass_rates, color=colours, s=10, zorder=3)
        axes.set_xticks(
            list(positions),
            list(task_ids),
            rotation=60 if len(task_ids) > 6 else 0,
            ha="right" if len(task_ids) > 6 else "center",
            fontsize=7,
        )
        axes.set_xlim(-0.6, max(len(task_ids), 1) - 0.4)
    else:
        ordered = sorted(pass_rates, reverse=True)
        axes.fill_between(range(len(ordered)), ordered, step="mid", color=_MAIN_COLOUR, alpha=0.75, linewidth=0)
        solved = sum(rate >= 1.0 for rate in ordered)
        failed = sum(rate <= 0.0 for rate in ordered)
        axes.set_xlabel(f"{len(ordered)} tasks, sorted by pass rate ({solved} always pass, {failed} never)")
        axes.set_xlim(0, len(ordered) - 1)
    axes.set_ylim(-0.03, 1.05)
    axes.set_ylabel("pass rate")
    axes.set_title("Pass rate per task", loc="left", fontsize=10)
    return _svg(figure, "pass rate per task")


@_styled
def delta_svg(task_ids: Sequence[str], deltas: Sequence[float], label: str) -> str:
    """Per-task pass-rate change between two runs (green up, red down)."""
    figure, axes = _figure(width=10.0, height=3.4)
    colours = [_PASS_COLOUR if delta > 0 else _FAIL_COLOUR if delta < 0 else "#a0aec0" for delta in deltas]
    if len(task_ids) <= _MAX_DELTA_BARS:
        positions = range(len(task_ids))
        axes.bar(positions, deltas, color=colours, width=0.8)
        axes.set_xticks(
            list(positions),
            list(task_ids),
            rotation=60 if len(task_ids) > 8 else 0,
            ha="right" if len(task_ids) > 8 else "center",
            fontsize=7,
        )
        axes.set_xlim(-0.6, max(len(task_ids), 1) - 0.4)
    else:
        ordered = sorted(deltas, reverse=True)
        axes.fill_between(range(len(ordered)), ordered, step="mid", color=_MAIN_COLOUR, alpha=0.75, linewidth=0)
        axes.set_xlabel(f"{len(ordered)} tasks, sorted by change")
        axes.set_xlim(0, max(len(ordered) - 1, 1))
    axes.axhline(0, color="#4a5568", linewidth=0.8)
    axes.set_ylim(-1.05, 1.05)
    axes.set_ylabel("Δ pass rate")
    axes.set_title(f"Pass-rate change per task: {label}", loc="left", fontsize=10)
    return _svg(figure, "pass rate change per task")


@_styled
def training_curve_svg(
    metric: str, lines: Sequence[tuple[str, Sequence[float], Sequence[float], Sequence[float] | None]]
) -> str:
    """One metric of training logs against the step: a line per log ``(label, steps, values, spread)``.

    ``spread`` (the metric's per-step standard deviation, when the log has one) is drawn as a band.
    """
    figure, axes = _figure()
    for label, steps, values, spread in lines:
        # '$' would start matplotlib's mathtext, a leading '_' hides a legend entry.
        shown = " " + label if label.startswith("_") else label
        (line,) = axes.plot(steps, values, marker="o", markersize=2.5, linewidth=1.4, label=shown.replace("$", r"\$"))
        if spread is not None:
            low = [value - deviation for value, deviation in zip(values, spread, strict=True)]
            high = [value + deviation for value, deviation in zip(values, spread, strict=True)]
            axes.fill_between(steps, low, high, color=line.get_color(), alpha=0.15, linewidth=0)
    if len(lines) > 1:
        axes.legend(frameon=False, loc="best", fontsize=7)
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
    axes.set_xlabel("step")
    axes.set_title(metric.replace("$", r"\$"), loc="left", fontsize=10)
    return _svg(figure, re.sub(r"[^\w ./:-]", "_", metric) + " per step")
