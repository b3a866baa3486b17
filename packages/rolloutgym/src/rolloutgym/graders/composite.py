"""``CompositeGrader``: grade each rubric criterion with its own grader, then aggregate.

Two forms::

    CompositeGrader(default_grader, overrides={"format": format_grader})
    CompositeGrader({"correct": correct_grader, "format": format_grader})

Each criterion grader is called as ``grader(input, criterion)`` and returns a float or a
:class:`Score` (or an awaitable of one, for :meth:`CompositeGrader.ascore`). The composite
itself is a :class:`~rolloutgym_protocol.Grader`: ``composite(input, rubric)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

from rolloutgym_protocol import Criterion, Rubric, Score, ScoreValue

from ._common import discard_awaitable, is_awaitable, to_score, with_rubric_metadata
from .aggregations import Aggregator, weighted_mean

__all__ = ["CompositeGrader", "CriterionGrader"]

CriterionGrader = Callable[[Any, Criterion], "ScoreValue | Awaitable[ScoreValue]"]
"""``grader(input, criterion) -> float | Score`` (or an awaitable of one)."""


def _checked_graders(graders: Mapping[str, Any], source: str) -> dict[str, CriterionGrader]:
    checked: dict[str, CriterionGrader] = {}
    for name, grader in graders.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{source} names must be non-empty criterion ids, got {name!r}")
        if not callable(grader):
            raise TypeError(f"{source} {name!r} must be callable, got {type(grader).__name__}")
        checked[name] = grader
    return checked


CompositeInputT = TypeVar("CompositeInputT")


class CompositeGrader(Generic[CompositeInputT]):
    """Grades every criterion of a :class:`Rubric` and aggregates the component scores.

    Args:
        grader: either one callable used for every criterion (``overrides`` replace it per
            criterion), or a mapping ``{criterion_id: grader}`` merged with ``overrides``.
        overrides: per-criterion graders that take precedence.
        aggregate: folds the components into the value; :func:`weighted_mean` by default.
        metadata: copied into every resulting Score's metadata.

    The result is ``Score(aggregate(rubric, components), components, metadata)``, whose
    metadata also carries ``rubric_fingerprint`` and ``rubric_id`` (when the rubric has one).

    :meth:`score` runs the criteria one after another and needs synchronous graders;
    :meth:`ascore` runs them concurrently and accepts both kinds.

    Raises:
        TypeError: ``grader`` is neither callable nor a mapping, or a grader is not callable.
        ValueError: the mapping is empty, or a criterion id is empty.
    """

    def __init__(
        self,
        grader: CriterionGrader | Mapping[str, CriterionGrader],
        *,
        overrides: Mapping[str, CriterionGrader] | None = None,
        aggregate: Aggregator = weighted_mean,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        explicit_overrides = _checked_graders(overrides or {}, "override")
        if isinstance(grader, Mapping):
            if not grader:
                raise ValueError("a composite grader requires at least one grader")
            self._default: CriterionGrader | None = None
            self._graders = {**_checked_graders(grader, "grader"), **explicit_overrides}
        elif callable(grader):
            self._default = grader
            self._graders = explicit_overrides
        else:
            raise TypeError(f"grader must be callable or a mapping of graders, got {type(grader).__name__}")
        if not callable(aggregate):
            raise TypeError(f"aggregate must be callable, got {type(aggregate).__name__}")
        self._aggregate = aggregate
        self.metadata: dict[str, Any] = dict(metadata or {})

    @property
    def names(self) -> tuple[str, ...]:
        """The criterion ids that have an explicitly configured grader."""
        return tuple(self._graders)

    def grader_for(self, criterion_id: str) -> CriterionGrader:
        """The grader used for ``criterion_id`` (an override, an explicit grader, or the default).

        Raises:
            KeyError: no grader is configured for that criterion.
        """
        grader = self._graders.get(criterion_id, self._default)
        if grader is None:
            raise KeyError(f"no grader configured for criterion {criterion_id!r}")
        return grader

    def _plan(self, rubric: Rubric) -> list[tuple[Criterion, CriterionGrader]]:
        if not isinstance(rubric, Rubric):
            raise TypeError(f"CompositeGrader needs a Rubric, got {type(rubric).__name__}")
        missing = [
            criterion.id for criterion in rubric.criteria if self._graders.get(criterion.id, self._default) is None
        ]
        if missing:
            raise ValueError(
                f"no grader configured for rubric criteria: {', '.join(missing)}; "
                "add them to the grader mapping or to overrides"
            )
        return [(criterion, self.grader_for(criterion.id)) for criterion in rubric.criteria]

    def _result(self, rubric: Rubric, components: dict[str, Score]) -> Score:
        value = self._aggregate(rubric, components)
        return with_rubric_metadata(Score(value, components), rubric, self.metadata)

    def score(self, input: Any, rubric: Rubric) -> Score:
        """Grade ``input`` against ``rubric`` criterion by criterion, in rubric order.

        Raises:
            TypeError: a grader returned an awaitable (use :meth:`ascore`) or a non-number.
            ValueError: a rubric criterion has no grader.
        """
        components: dict[str, Score] = {}
        for criterion, grader in self._plan(rubric):
            result = grader(input, criterion)
            if is_awaitable(result):
                discard_awaitable(result)
                raise TypeError(f"grader {criterion.id!r} returned an awaitable; use ascore()")
            components[criterion.id] = to_score(result, f"grader {criterion.id!r} did not return a numeric score")
        return self._result(rubric, components)

    __call__ = score

    async def ascore(self, input: Any, rubric: Rubric) -> Score:
        """Grade all criteria concurrently (``asyncio.gather``) and aggregate.

        Synchronous graders are called inline on the event loop; awaitable results are
        awaited. If one grader fails, the others still running are cancelled and the
        error propagates.
        """
        plan = self._plan(rubric)

        async def grade(criterion: Criterion, grader: CriterionGrader) -> Score:
            result = grader(input, criterion)
            if is_awaitable(result):
                result = await result
            return to_score(result, f"grader {criterion.id!r} did not return a numeric score")

        tasks = [asyncio.ensure_future(grade(criterion, grader)) for criterion, grader in plan]
        try:
            scores = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        components = {criterion.id: score for (criterion, _), score in zip(plan, scores, strict=True)}
        return self._result(rubric, components)

    def __repr__(self) -> str:
        default = "none" if self._default is None else getattr(self._default, "__name__", repr(self._default))
        return f"CompositeGrader(default={default}, graders={list(self._graders)!r})"
