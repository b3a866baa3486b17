"""The training log: one JSON line per logged trainer step, drawn by ``rolloutgym report``.

The format is rolloutgym's (``docs/reference/training-logs.md``, read by
``rolloutgym.runs.read_training_log``); this module writes it from a TRL trainer.

The first line is a header (``{"rolloutgym_training_log": 1, "trainer": ..., "model": ...,
"env_ids": [...]}``); each later line is what the trainer logged at that step (TRL names:
``reward``, ``reward_std``, ``kl``, ``loss``, ``rolloutgym/pass_rate``...) plus ``step``,
``epoch``, ``seconds`` (wall time since the previous line) and ``cpu_seconds`` (this
process's CPU time since the previous line, all threads: the steadier figure on a busy machine). The last line of a
finished run has ``"event": "end"`` and the train summary.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rolloutgym.runs.training_log import TRAINING_LOG_FORMAT_KEY, TRAINING_LOG_VERSION

__all__ = ["TrainingLogWriter", "library_warnings_quiet", "quiet_progress_bars", "read_training_log"]

FORMAT_KEY = TRAINING_LOG_FORMAT_KEY


def _clean(values: Mapping[str, Any]) -> dict[str, Any]:
    cleaned: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, bool) or value is None:
            cleaned[key] = value
        elif isinstance(value, int):
            cleaned[key] = value
        elif isinstance(value, float):
            cleaned[key] = value if math.isfinite(value) else None
        elif isinstance(value, str):
            cleaned[key] = value
    return cleaned


class TrainingLogWriter:
    """Appends the trainer's logs to a JSONL file (see the module docstring for the format).

    Use :meth:`callback` to get a ``transformers.TrainerCallback`` that feeds it.
    """

    def __init__(
        self, path: str | Path, header: Mapping[str, Any], on_write: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.path = Path(path)
        self.on_write = on_write
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: list[dict[str, Any]] = []
        self._last = time.perf_counter()
        self._last_cpu = time.process_time()
        with self.path.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps({FORMAT_KEY: TRAINING_LOG_VERSION, **header}, default=str) + "\n")

    def write(self, record: Mapping[str, Any]) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        line = {**_clean(record), "seconds": round(now - self._last, 4), "cpu_seconds": round(cpu - self._last_cpu, 4)}
        self._last, self._last_cpu = now, cpu
        self.records.append(line)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
        if self.on_write is not None:
            self.on_write(line)

    def callback(self) -> Any:
        """A ``TrainerCallback`` writing every ``on_log`` to this file."""
        from transformers import TrainerCallback

        log = self

        class _Callback(TrainerCallback):
            def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
                if not logs:
                    return
                record = {"step": state.global_step, "epoch": state.epoch, **logs}
                if any(key.startswith("train_") for key in logs):
                    record["event"] = "end"
                log.write(record)

        return _Callback()


def read_training_log(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(header, records)`` of a training log; raises ``ValueError`` (a ``TrainingLogError``) when it is not one.

    The reader is the core's :func:`rolloutgym.runs.read_training_log`; this keeps the plugin's tuple shape.
    """
    from rolloutgym.runs import read_training_log as read

    log = read(path)
    return {FORMAT_KEY: TRAINING_LOG_VERSION, **log.header}, list(log.records)


@contextlib.contextmanager
def library_warnings_quiet() -> Iterator[None]:
    """Silence deprecation notices that trl/transformers/accelerate/peft raise about their own
    internals (nothing a rolloutgym user can act on); every other warning still shows."""
    with warnings.catch_warnings():
        for category in (FutureWarning, DeprecationWarning, PendingDeprecationWarning):
            warnings.filterwarnings(
                "ignore", category=category, module=r"(transformers|trl|accelerate|peft|torch)(\.|$)"
            )
        yield


def quiet_progress_bars() -> None:
    """Per-dataset-map and weight-loading progress bars drown the per-step log lines; turn them off."""
    import datasets
    import transformers

    datasets.disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()
