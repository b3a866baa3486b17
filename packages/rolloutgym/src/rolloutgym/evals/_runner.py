"""Benchmark records and the synchronous benchmark runner."""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from rolloutgym_protocol import Score

from ._registered import make_benchmark

__all__ = [
    "Benchmark",
    "BenchmarkResult",
    "Evaluation",
    "EvaluationCallback",
    "EvaluationRecord",
    "run_benchmark",
    "run_benchmarks",
]


@dataclass(frozen=True)
class Evaluation:
    """What an evaluation callback reports for one environment.

    Args:
        score: the episode's score (a number is converted with ``Score.from_value``).
        truncated: the episode was cut off (step or token budget) before it finished.
        metadata: anything worth keeping with the record.
    """

    score: Score
    truncated: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.score, Score):
            if isinstance(self.score, bool | int | float):
                object.__setattr__(self, "score", Score.from_value(self.score))
            else:
                raise TypeError(f"Evaluation score must be a Score or a number, got {type(self.score).__name__}")
        object.__setattr__(self, "metadata", dict(self.metadata))


ItemT = TypeVar("ItemT")
EnvironmentT = TypeVar("EnvironmentT", contravariant=True)


class EvaluationCallback(Protocol[EnvironmentT]):
    """``evaluate(environment) -> Evaluation``: runs one episode and scores it (synchronously)."""

    def __call__(self, environment: EnvironmentT, /) -> Evaluation: ...


@dataclass(frozen=True)
class EvaluationRecord:
    """The outcome for one benchmark item: a score, or the error that prevented one.

    An item that failed has ``score=None``, ``error`` set to the message and
    ``metadata["error_type"]`` set to the exception class name.
    """

    index: int
    item_id: str | None = None
    score: Score | None = None
    truncated: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the score via :meth:`Score.to_dict`)."""
        return {
            "index": self.index,
            "item_id": self.item_id,
            "score": None if self.score is None else self.score.to_dict(),
            "truncated": self.truncated,
            "metadata": dict(self.metadata),
            "error": self.error,
        }


@dataclass(frozen=True)
class Benchmark(Generic[ItemT]):
    """A named list of items and how to build an environment for each.

    Args:
        name: unique, non-blank name (stored stripped).
        items: the items; stored as a tuple.
        make_env: ``make_env(item) -> env``; the runner closes the env after evaluating it.
        metadata: copied into the result's metadata.
        item_id: ``item_id(item) -> str``; without it an item's id is its index.
    """

    name: str
    items: Sequence[Any]
    make_env: Callable[[Any], Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    item_id: Callable[[Any], str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError("benchmark name must be non-empty")
        if not callable(self.make_env):
            raise TypeError(f"benchmark {self.name!r} make_env must be callable, got {type(self.make_env).__name__}")
        if self.item_id is not None and not callable(self.item_id):
            raise TypeError(f"benchmark {self.name!r} item_id must be callable or None")
        object.__setattr__(self, "name", self.name.strip())
        object.__setattr__(self, "items", tuple(self.items))
        object.__setattr__(self, "metadata", dict(self.metadata))


@dataclass(frozen=True)
class BenchmarkResult:
    """Aggregate results of one benchmark run.

    Attributes:
        score: sum of scores over ``num_examples``; failed items count as 0.
        score_completed: mean score over items that were scored and not truncated, or None.
        components: per-component sums over ``num_examples`` (missing components count as 0).
        num_examples: items attempted; num_scored: items with a score; num_completed: scored and
            not truncated; num_errors: items that raised; num_truncated: scored but truncated.
        elapsed_seconds: wall-clock time of the run.
        records: one :class:`EvaluationRecord` per item, in order.
        metadata: the benchmark's metadata.
    """

    name: str
    score: float
    score_completed: float | None
    components: dict[str, float]
    num_examples: int
    num_scored: int
    num_completed: int
    num_errors: int
    num_truncated: int
    elapsed_seconds: float
    records: tuple[EvaluationRecord, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, records included."""
        return {
            "name": self.name,
            "score": self.score,
            "score_completed": self.score_completed,
            "components": dict(self.components),
            "num_examples": self.num_examples,
            "num_scored": self.num_scored,
            "num_completed": self.num_completed,
            "num_errors": self.num_errors,
            "num_truncated": self.num_truncated,
            "elapsed_seconds": self.elapsed_seconds,
            "records": [record.to_dict() for record in self.records],
            "metadata": dict(self.metadata),
        }


def _require_synchronous(evaluate: Any) -> None:
    if not callable(evaluate):
        raise TypeError(f"benchmark callback must be callable, got {type(evaluate).__name__}")
    if inspect.iscoroutinefunction(evaluate) or inspect.iscoroutinefunction(type(evaluate).__call__):
        raise TypeError(
            "benchmark callback must be synchronous; run the async episode inside it "
            "(e.g. with asyncio.run) and return an Evaluation"
        )


def _discard(awaitable: Any) -> None:
    """Release an awaitable a synchronous caller will never await (no 'never awaited' warning)."""
    release = getattr(awaitable, "close", None) or getattr(awaitable, "cancel", None)
    if callable(release):
        release()


def _close_environment(environment: Any) -> None:
    close = getattr(environment, "close", None)
    if not callable(close):
        return
    result = close()
    if inspect.isawaitable(result):
        _discard(result)
        raise TypeError(
            "environment close() returned an awaitable; run_benchmark needs synchronous "
            "environments (wrap async ones with rolloutgym_protocol.as_sync)"
        )


def _evaluate_environment(evaluate: EvaluationCallback, environment: Any) -> Evaluation:
    try:
        evaluation = evaluate(environment)
        if inspect.isawaitable(evaluation):
            _discard(evaluation)
            raise TypeError("evaluation callback returned an awaitable; benchmark callback must be synchronous")
        if not isinstance(evaluation, Evaluation):
            raise TypeError(f"evaluation callback must return Evaluation, got {type(evaluation).__name__}")
    except BaseException as error:
        try:
            _close_environment(environment)
        except Exception as close_error:
            error.add_note(f"closing the environment also failed: {type(close_error).__name__}: {close_error}")
        raise
    _close_environment(environment)
    return evaluation


def _run_item(
    benchmark: Benchmark, index: int, item: Any, evaluate: EvaluationCallback, fail_fast: bool
) -> EvaluationRecord:
    item_id: str | None = None
    try:
        item_id = str(benchmark.item_id(item)) if benchmark.item_id is not None else str(index)
        evaluation = _evaluate_environment(evaluate, benchmark.make_env(item))
    except Exception as error:
        if fail_fast:
            raise
        return EvaluationRecord(
            index=index, item_id=item_id, metadata={"error_type": type(error).__name__}, error=str(error)
        )
    return EvaluationRecord(
        index=index,
        item_id=item_id,
        score=evaluation.score,
        truncated=evaluation.truncated,
        metadata=dict(evaluation.metadata),
    )


def _aggregate(benchmark: Benchmark, records: tuple[EvaluationRecord, ...], elapsed_seconds: float) -> BenchmarkResult:
    num_examples = len(records)
    scored = [record for record in records if record.score is not None]
    completed = [record for record in scored if not record.truncated]
    component_sums: dict[str, list[float]] = {}
    for record in scored:
        assert record.score is not None
        for name, component in record.score.components.items():
            component_sums.setdefault(name, []).append(component.value)
    total = math.fsum(record.score.value for record in scored if record.score is not None)
    completed_total = math.fsum(record.score.value for record in completed if record.score is not None)
    return BenchmarkResult(
        name=benchmark.name,
        score=total / num_examples if num_examples else 0.0,
        score_completed=completed_total / len(completed) if completed else None,
        components={name: math.fsum(values) / num_examples for name, values in component_sums.items()},
        num_examples=num_examples,
        num_scored=len(scored),
        num_completed=len(completed),
        num_errors=sum(record.error is not None for record in records),
        num_truncated=sum(record.truncated for record in scored),
        elapsed_seconds=elapsed_seconds,
        records=records,
        metadata=dict(benchmark.metadata),
    )


def run_benchmark(
    benchmark: Benchmark | str,
    evaluate: EvaluationCallback,
    *,
    limit: int | None = None,
    fail_fast: bool = False,
) -> BenchmarkResult:
    """Evaluate every item of ``benchmark`` (or the first ``limit``) one after another.

    ``benchmark`` may be a registered benchmark's name (``"gsm8k"``): it is made with
    :func:`make_benchmark` and its default source.

    For each item: ``env = benchmark.make_env(item)``, ``evaluation = evaluate(env)``, then
    ``env.close()`` whatever happened. An exception from any of these becomes a record with
    ``error`` and ``metadata["error_type"]`` (and scores 0 in ``score``), unless
    ``fail_fast`` is set, in which case it propagates.

    Raises:
        TypeError: ``evaluate`` is an async function (checked before anything runs).
        ValueError: ``limit`` is negative.
    """
    _require_synchronous(evaluate)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be non-negative, got {limit}")
    if isinstance(benchmark, str):
        benchmark = make_benchmark(benchmark)
    items = benchmark.items if limit is None else benchmark.items[:limit]
    started = time.perf_counter()
    records = tuple(_run_item(benchmark, index, item, evaluate, fail_fast) for index, item in enumerate(items))
    return _aggregate(benchmark, records, time.perf_counter() - started)


def run_benchmarks(
    benchmarks: Iterable[Benchmark | str],
    evaluate: EvaluationCallback,
    *,
    limit: int | None = None,
    fail_fast: bool = False,
) -> dict[str, BenchmarkResult]:
    """Run several benchmarks (or registered benchmarks' names) in order with :func:`run_benchmark`; results by name.

    Names are checked before anything runs, so a duplicate wastes no work (rolloutlib 0.2.0
    raised only when it reached the duplicate).

    Raises:
        ValueError: two benchmarks share a name, or ``limit`` is negative.
        TypeError: ``evaluate`` is an async function.
    """
    _require_synchronous(evaluate)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be non-negative, got {limit}")
    ordered = [make_benchmark(item) if isinstance(item, str) else item for item in benchmarks]
    seen: set[str] = set()
    for benchmark in ordered:
        if benchmark.name in seen:
            raise ValueError(f"duplicate benchmark name: {benchmark.name}")
        seen.add(benchmark.name)
    return {
        benchmark.name: run_benchmark(benchmark, evaluate, limit=limit, fail_fast=fail_fast) for benchmark in ordered
    }
