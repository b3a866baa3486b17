"""Training curves of ``rolloutgym train report``: the core report's training view.

The training log is rolloutgym's own format (``rolloutgym.runs.read_training_log``) and
``rolloutgym report LOG...`` draws it; this module keeps the plugin's command and function
names, with the first log's ``.html`` as the default output.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["build_curves_report"]


def build_curves_report(logs: Sequence[str | Path], out: str | Path | None = None, *, title: str | None = None) -> Path:
    """Write the HTML page of ``logs`` (training logs written by ``rolloutgym train``); returns its path.

    One plot per logged metric, every log on the same axes, the before/after evaluation
    table; see :func:`rolloutgym.report.build_training_report`.
    """
    from rolloutgym.report import build_training_report

    return build_training_report(logs, out, title=title or "Training curves").path
