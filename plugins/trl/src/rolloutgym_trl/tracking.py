"""``--report-to wandb|mlflow|tensorboard``: training watched in the tracker people already use.

TRL's own ``report_to`` (transformers' integrations) carries the trainer's metrics, and with them
the env-side ones: :func:`~rolloutgym_trl.env_reward` logs through TRL's ``log_metric``, so
``rolloutgym/pass_rate``, the signal figures (``rolloutgym/groups_with_spread``, ...), the mean of
each Score component (``rolloutgym/reward/NAME``), the share of each stop reason
(``rolloutgym/stop/REASON``) and the attributed episodes (``rolloutgym/attribution/PARTY``,
``rolloutgym/masked_attributed``) reach every tracker with the loss. Where each tracker writes
is its own configuration, read from the environment as usual:

* ``tensorboard``: event files under ``OUT/runs/`` (``TENSORBOARD_LOGGING_DIR`` overrides);
* ``mlflow``: ``MLFLOW_TRACKING_URI`` (e.g. ``file:./mlruns``, a local file store),
  ``MLFLOW_EXPERIMENT_NAME``;
* ``wandb``: ``WANDB_PROJECT``, ``WANDB_MODE=offline`` (runs saved under ``WANDB_DIR``, synced later
  with ``wandb sync``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

__all__ = ["TRACKERS", "report_to_options"]

TRACKERS = {"tensorboard": "tensorboard", "mlflow": "mlflow", "wandb": "wandb"}
"""Tracker name -> the module transformers' integration imports."""


def _names(report_to: str | Sequence[str] | None) -> list[str]:
    if report_to is None:
        return []
    parts = report_to.split(",") if isinstance(report_to, str) else list(report_to)
    return [str(part).strip() for part in parts if str(part).strip() and str(part).strip() != "none"]


def report_to_options(report_to: str | Sequence[str] | None, out: str | Path) -> dict[str, Any]:
    """The ``TrainingArguments`` fields that send a run to these trackers (``{}`` for none).

    Raises:
        ConfigError: a tracker that is not one of :data:`TRACKERS`, or whose library is not installed
            (the message names the ``pip install``).
    """
    names = _names(report_to)
    if not names:
        return {}
    unknown = [name for name in names if name not in TRACKERS]
    if unknown:
        raise ConfigError(
            f"--report-to: unknown tracker {', '.join(map(repr, unknown))}; use a comma-separated list of "
            f"{', '.join(TRACKERS)} (or 'none')"
        )
    missing = [name for name in names if importlib.util.find_spec(TRACKERS[name]) is None]
    if missing:
        from rolloutgym.install_hints import pip_install

        hints = [pip_install("rolloutgym-trl", "tracking")] if set(missing) - {"wandb"} else []
        hints += [pip_install("rolloutgym-trl", "wandb")] if "wandb" in missing else []
        raise ConfigError(
            f"--report-to {','.join(missing)}: the tracker library is not installed; {' and '.join(hints)}"
        )
    return {"report_to": names, "run_name": Path(out).name or "rolloutgym"}
