"""Aggregators: functions that fold per-criterion scores into one value.

An :data:`Aggregator` receives the rubric and the component scores keyed by criterion id
and returns a float. Components whose id is not a rubric criterion are ignored; a criterion
without a component is an error (``KeyError``), never a silent zero.

* :func:`weighted_sum` -- ``sum(weight * value)``.
* :func:`weighted_mean` -- the weighted sum divided by the total weight.
* :func:`all_pass` -- ``1.0`` when every criterion scores at least ``1.0``.
* :func:`asymmetric_mean` -- required criteria, plus bonus, minus penalty.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from rolloutgym_protocol import Criterion, Rubric, Score

__all__ = ["Aggregator", "all_pass", "asymmetric_mean", "weighted_mean", "weighted_sum"]

Aggregator = Callable[[Rubric, Mapping[str, Score]], float]
"""``aggregate(rubric, components) -> float``, components keyed by criterion id."""

CRITERION_KINDS = ("required", "bonus", "penalty")


def _component_value(components: Mapping[str, Score], criterion: Criterion) -> float:
    try:
        component = components[criterion.id]
    except KeyError:
        raise KeyError(
            f"no component score for criterion {criterion.id!r}; "
            f"components present: {', '.join(sorted(components)) or 'none'}"
        ) from None
    return Score.from_value(component).value


def weighted_sum(rubric: Rubric, components: Mapping[str, Score]) -> float:
    """Sum of ``criterion.weight * components[criterion.id].value`` over the rubric."""
    return math.fsum(criterion.weight * _component_value(components, criterion) for criterion in rubric.criteria)


def weighted_mean(rubric: Rubric, components: Mapping[str, Score]) -> float:
    """Weighted sum divided by the total weight.

    Raises:
        ValueError: every criterion has weight 0.
    """
    total_weight = math.fsum(criterion.weight for criterion in rubric.criteria)
    if total_weight <= 0:
        raise ValueError("weighted mean requires at least one positive weight")
    return weighted_sum(rubric, components) / total_weight


def all_pass(rubric: Rubric, components: Mapping[str, Score]) -> float:
    """``1.0`` if every criterion's value is at least ``1.0`` (values above 1 pass), else ``0.0``."""
    passed = all(_component_value(components, criterion) >= 1.0 for criterion in rubric.criteria)
    return 1.0 if passed else 0.0


def _kind_mean(criteria: list[Criterion], values: list[float]) -> float:
    total_weight = math.fsum(criterion.weight for criterion in criteria)
    if total_weight <= 0:
        return 0.0
    return math.fsum(criterion.weight * value for criterion, value in zip(criteria, values, strict=True)) / total_weight


def asymmetric_mean(
    rubric: Rubric,
    components: Mapping[str, Score],
    *,
    bonus_weight: float = 1.0,
    penalty_weight: float = 1.0,
) -> float:
    """Required mean, plus weighted bonus mean, minus weighted penalty mean.

    Criteria are grouped by ``kind``. Each group's weighted mean is 0.0 when the group is
    empty or its weights sum to 0. Penalty criteria describe the *desired safe behaviour*:
    a penalty value of 1 costs nothing and 0 costs ``penalty_weight``. So the result is::

        mean(required) + bonus_weight * mean(bonus) - penalty_weight * mean(1 - penalty)

    It is not clamped: it may be negative or above 1. Use
    ``functools.partial(asymmetric_mean, bonus_weight=0.5)`` to get an :data:`Aggregator`.

    Raises:
        ValueError: a weight is negative or not finite, or a criterion kind is not one of
            ``required``, ``bonus`` or ``penalty``.
    """
    for name, weight in (("bonus_weight", bonus_weight), ("penalty_weight", penalty_weight)):
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"{name} must be finite and >= 0, got {weight!r}")
    unsupported = sorted({criterion.kind for criterion in rubric.criteria} - set(CRITERION_KINDS))
    if unsupported:
        raise ValueError(
            f"unsupported criterion kinds: {', '.join(unsupported)}; "
            f"asymmetric_mean understands {', '.join(CRITERION_KINDS)}"
        )
    grouped: dict[str, tuple[list[Criterion], list[float]]] = {kind: ([], []) for kind in CRITERION_KINDS}
    for criterion in rubric.criteria:
        criteria, values = grouped[criterion.kind]
        criteria.append(criterion)
        values.append(_component_value(components, criterion))
    required = _kind_mean(*grouped["required"])
    bonus = _kind_mean(*grouped["bonus"])
    penalty_criteria, penalty_values = grouped["penalty"]
    penalty = _kind_mean(penalty_criteria, [1.0 - value for value in penalty_values])
    return required + bonus_weight * bonus - penalty_weight * penalty
