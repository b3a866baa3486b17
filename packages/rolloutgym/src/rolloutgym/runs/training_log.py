"""Training logs: one JSON object per trainer step, the trainer-neutral file ``rolloutgym report`` draws.

The format (see ``docs/reference/training-logs.md``)::

    {"rolloutgym_training_log": 1, "trainer": "grpo", "model": "hf:tiny"}   # optional header
    {"step": 1, "reward": 0.06, "rolloutgym/pass_rate": 0.0, "loss": 0.01, "kl": 0.0}
    {"step": 2, "reward": 0.31, "loss": 0.02}                             # metrics may be missing
    {"event": "evaluation", "before/pass_rate": 0.0, "after/pass_rate": 1.0}   # not a step

Every numeric value of a step line other than ``step`` and ``epoch`` is a metric; ``null``
(a NaN the trainer wrote) means no value at that step. A log without a header (for example
tinker-cookbook's ``metrics.jsonl``, ``{"step": N, ...}`` per line) reads the same.
Blank lines and a last line cut off mid-write (a killed trainer) are skipped.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rolloutgym_protocol.errors import ConfigError, json_error_text

__all__ = [
    "TRAINING_LOG_FORMAT_KEY",
    "TRAINING_LOG_VERSION",
    "TrainingLog",
    "TrainingLogError",
    "file_kind",
    "read_training_log",
]

TRAINING_LOG_FORMAT_KEY = "rolloutgym_training_log"
TRAINING_LOG_VERSION = 1
# Numeric keys of a step line that count progress rather than measure it.
_NOT_METRICS = frozenset({"step", "epoch"})
_EXAMPLE = '{"step": 3, "reward": 0.5, "loss": 0.12}'


class TrainingLogError(ConfigError):
    """A training log is missing or malformed (the message names the file and line)."""


def is_number(value: Any) -> bool:
    """A finite int or float (``True``/``False`` are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class TrainingLog:
    """A training log as read by :func:`read_training_log`.

    Attributes:
        path: the file.
        header: the header line without its format key (``{}`` for a log without one).
        records: every other line, in file order: step lines and event lines.
    """

    path: Path
    header: dict[str, Any]
    records: tuple[dict[str, Any], ...]

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The step lines (those without an ``event``)."""
        return [record for record in self.records if "event" not in record]

    @property
    def events(self) -> list[dict[str, Any]]:
        """The event lines (``"event": "end"``, ``"event": "evaluation"``, ...)."""
        return [record for record in self.records if "event" in record]

    @property
    def metrics(self) -> list[str]:
        """Every metric with a value at some step, in the order the log first names them."""
        seen: dict[str, None] = {}
        for record in self.steps:
            for key, value in record.items():
                if key not in _NOT_METRICS and is_number(value):
                    seen.setdefault(key)
        return list(seen)

    def series(self, metric: str) -> tuple[list[float], list[float]]:
        """``(steps, values)`` of ``metric`` at the steps that logged it."""
        steps: list[float] = []
        values: list[float] = []
        for record in self.steps:
            value = record.get(metric)
            if is_number(value):
                steps.append(record["step"])
                values.append(float(value))
        return steps, values


def _parse(path: Path, number: int, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrainingLogError(
            f"{path}:{number}: not valid JSON ({json_error_text(exc)}); each line of a training log is one JSON "
            f"object, such as {_EXAMPLE}"
        ) from None
    if not isinstance(data, dict):
        raise TrainingLogError(
            f"{path}:{number}: expected a JSON object, got {type(data).__name__}; write one object per step, "
            f"such as {_EXAMPLE}"
        )
    return data


def _check_header(path: Path, number: int, data: dict[str, Any], first: bool) -> dict[str, Any]:
    if not first:
        raise TrainingLogError(
            f"{path}:{number}: a second header line ({TRAINING_LOG_FORMAT_KEY!r}); the header must be the first "
            "line; are two logs concatenated? Report them as two files instead"
        )
    version = data[TRAINING_LOG_FORMAT_KEY]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise TrainingLogError(f"{path}:{number}: {TRAINING_LOG_FORMAT_KEY!r} must be 1, got {version!r}")
    if version > TRAINING_LOG_VERSION:
        raise TrainingLogError(
            f"{path}: training log format {version} is newer than this rolloutgym reads ({TRAINING_LOG_VERSION}); "
            "upgrade rolloutgym"
        )
    return {key: value for key, value in data.items() if key != TRAINING_LOG_FORMAT_KEY}


def _check_record(path: Path, number: int, data: dict[str, Any]) -> dict[str, Any]:
    if "event" in data:
        if not isinstance(data["event"], str):
            raise TrainingLogError(
                f"{path}:{number}: 'event' must be a string naming the event (such as \"end\"), got {data['event']!r}"
            )
        return data
    if "step" not in data:
        raise TrainingLogError(
            f"{path}:{number}: no 'step'; each line is one trainer step: add \"step\": N (the trainer's step "
            f'number), as in {_EXAMPLE}; a line that is not a step needs "event": "NAME" instead'
        )
    if not is_number(data["step"]):
        raise TrainingLogError(f"{path}:{number}: 'step' must be a number (the trainer's step), got {data['step']!r}")
    return data


def read_training_log(path: str | Path) -> TrainingLog:
    """Read and check a training log (format in this module's docstring).

    Raises:
        TrainingLogError: the file is missing or empty, or a line is not JSON, not an object,
            a step line has no numeric ``step``, or the header is not the first line; the
            message names ``file:line`` and the fix.
    """
    path = Path(path)
    if not path.is_file():
        raise TrainingLogError(f"no training log '{path}' (no such file)")
    header: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    first = True
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            if not text.endswith("\n") and not _parses(text):
                break  # the last line, cut off mid-write by a killed trainer
            data = _parse(path, number, text)
            if TRAINING_LOG_FORMAT_KEY in data:
                header = _check_header(path, number, data, first)
            else:
                records.append(_check_record(path, number, data))
            first = False
    if first:
        raise TrainingLogError(f"{path}: empty training log; a training log has one JSON object per line")
    return TrainingLog(path, header, tuple(records))


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def file_kind(path: str | Path) -> Literal["run", "training_log"]:
    """Whether ``path`` is a run file or a training log, from its first line (not its name).

    Raises:
        ConfigError: the file is missing, empty, or its first line is neither.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"'{path}' does not exist; give run files ('rolloutgym run --out') or training logs "
            "('rolloutgym train', OUT/training_log.jsonl)"
        )
    with path.open(encoding="utf-8", errors="replace") as handle:
        first = next((line for line in handle if line.strip()), "")
    if not first:
        raise ConfigError(f"{path}: empty file; neither a run file nor a training log")
    try:
        data = json.loads(first)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:1: not valid JSON ({json_error_text(exc)}); neither a run file nor a training log"
        ) from None
    if isinstance(data, dict) and data.get("kind") == "header":
        return "run"
    if isinstance(data, dict) and ({TRAINING_LOG_FORMAT_KEY, "step", "event"} & data.keys()):
        return "training_log"
    raise ConfigError(
        f'{path}:1: neither a run file (its first line is the run header, "kind": "header") nor a training '
        f'log (its first line is {{"{TRAINING_LOG_FORMAT_KEY}": 1, ...}} or a step, {_EXAMPLE})'
    )
