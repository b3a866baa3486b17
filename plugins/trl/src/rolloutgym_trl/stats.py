"""The figures that tell a GRPO run's signal from its noise.

* :func:`group_signal`: per step, how many GRPO groups carry a gradient at all (a group whose
  episodes all got the same reward has advantage 0 everywhere), the reward spread inside
  groups and the mean advantage magnitude, computed the way TRL computes advantages
  (``(r - group mean) / (group std + 1e-4)``).
* :func:`mean_and_error`: a mean with its standard error.
* :func:`paired_change`: the before/after change of a pass rate on the same tasks, with the
  standard error of the per-task differences (tasks are the independent unit; several
  episodes of one task are not), and whether it lies outside noise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Change", "GroupSignal", "group_signal", "mean_and_error", "paired_change"]

NOISE_Z = 2.0
"""A change counts as outside noise when it is more than this many standard errors from 0."""


@dataclass(frozen=True)
class GroupSignal:
    """What one step's groups give GRPO to learn from."""

    groups: int
    groups_with_spread: int
    reward_std: float  # mean within-group standard deviation of the reward
    advantage_abs: float  # mean |advantage| over the scored episodes

    @property
    def spread_fraction(self) -> float:
        return self.groups_with_spread / self.groups if self.groups else 0.0


def has_spread(rewards: Sequence[float | None]) -> bool:
    """True when the scored rewards of a group are not all equal (so GRPO gets a gradient from it)."""
    values = [value for value in rewards if value is not None]
    return len(values) >= 2 and max(values) - min(values) > 1e-9


def group_signal(groups: Sequence[Sequence[float | None]]) -> GroupSignal:
    """The signal of one step: ``groups`` holds each GRPO group's rewards (``None``: a failed episode)."""
    spread, stds, advantages = 0, [], []
    for rewards in groups:
        values = [float(value) for value in rewards if value is not None]
        if len(values) < 2:
            continue
        spread += has_spread(values)
        mean, std = statistics.fmean(values), statistics.stdev(values)
        stds.append(std)
        advantages.extend(abs(value - mean) / (std + 1e-4) for value in values)
    return GroupSignal(
        groups=len(groups),
        groups_with_spread=spread,
        reward_std=statistics.fmean(stds) if stds else 0.0,
        advantage_abs=statistics.fmean(advantages) if advantages else 0.0,
    )


def mean_and_error(values: Sequence[float]) -> tuple[float, float]:
    """``(mean, standard error)``; the error is 0 for fewer than two values."""
    if not values:
        return 0.0, 0.0
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, 0.0
    return mean, statistics.stdev(values) / math.sqrt(len(values))


@dataclass(frozen=True)
class Change:
    """A pass rate before and after, on the same tasks."""

    before: float
    after: float
    before_error: float
    after_error: float
    error: float  # standard error of the change (paired by task)
    tasks: int

    @property
    def delta(self) -> float:
        return self.after - self.before

    @property
    def z(self) -> float:
        """The change in standard errors (infinite when the error is 0 and the change is not)."""
        if self.error > 0:
            return self.delta / self.error
        return 0.0 if self.delta == 0 else math.copysign(math.inf, self.delta)

    @property
    def outside_noise(self) -> bool:
        return abs(self.z) > NOISE_Z

    def line(self) -> str:
        """``pass rate 6.2% ± 2.1 -> 15.6% ± 3.0: +9.4 points = 3.1 standard errors (32 tasks): outside noise``."""
        verdict = "outside noise" if self.outside_noise else f"inside noise (|change| <= {NOISE_Z:g} standard errors)"
        z = "inf" if math.isinf(self.z) else f"{self.z:+.1f}"
        return (
            f"pass rate {self.before:.1%} ± {self.before_error * 100:.1f} -> {self.after:.1%} ± "
            f"{self.after_error * 100:.1f}: {self.delta * 100:+.1f} points = {z} standard errors "
            f"(paired by task, {self.tasks} tasks): {verdict}"
        )


def paired_change(before: Mapping[str, float], after: Mapping[str, float]) -> Change | None:
    """The change from ``before`` to ``after`` (task id -> pass rate), on the tasks both have; None if none."""
    tasks = sorted(set(before) & set(after))
    if not tasks:
        return None
    first = [float(before[task]) for task in tasks]
    second = [float(after[task]) for task in tasks]
    mean_before, error_before = mean_and_error(first)
    mean_after, error_after = mean_and_error(second)
    _, error = mean_and_error([b - a for a, b in zip(first, second, strict=True)])
    return Change(mean_before, mean_after, error_before, error_after, error, len(tasks))
