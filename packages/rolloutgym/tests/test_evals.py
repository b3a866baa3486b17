"""run_benchmark / run_benchmarks: records, errors, env cleanup and aggregation."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, ClassVar

import gymnasium as gym
import pytest
from rolloutgym.evals import (
    Benchmark,
    BenchmarkResult,
    Evaluation,
    EvaluationRecord,
    run_benchmark,
    run_benchmarks,
)
from rolloutgym_protocol import Score


class Guess(gym.Env[int, int]):
    """One-step env: reward 1 when the action equals the hidden answer."""

    closed: ClassVar[list[int]] = []

    def __init__(self, answer: int) -> None:
        self.action_space = gym.spaces.Discrete(10)
        self.observation_space = gym.spaces.Discrete(10)
        self.answer = answer

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        return 0, float(action == self.answer), True, False, {}

    def close(self) -> None:
        Guess.closed.append(self.answer)


@pytest.fixture(autouse=True)
def clear_closed() -> None:
    Guess.closed.clear()


def make_guess_env(item: dict[str, Any]) -> Guess:
    if item["answer"] is None:
        raise ValueError(f"item {item['id']} has no answer")
    return Guess(item["answer"])


ITEMS = (
    {"id": "a", "answer": 3, "guess": 3},
    {"id": "b", "answer": 4, "guess": 1},
    {"id": "c", "answer": 5, "guess": 5, "truncate": True},
    {"id": "d", "answer": 6, "guess": "boom"},
)


def evaluate(env: Any) -> Evaluation:
    item = next(item for item in ITEMS if item["answer"] == env.answer)
    if item["guess"] == "boom":
        raise RuntimeError("policy crashed")
    env.reset(seed=0)
    _, reward, _, _, _ = env.step(item["guess"])
    return Evaluation(
        Score(reward, {"correct": reward, "format": 1.0}),
        truncated=item.get("truncate", False),
        metadata={"guess": item["guess"]},
    )


def benchmark(**overrides: Any) -> Benchmark:
    fields: dict[str, Any] = {
        "name": "guess",
        "items": list(ITEMS),
        "make_env": make_guess_env,
        "metadata": {"task": "guessing"},
        "item_id": lambda item: item["id"],
    }
    fields.update(overrides)
    return Benchmark(**fields)


def test_run_benchmark_records_and_aggregation() -> None:
    result = run_benchmark(benchmark(), evaluate)
    assert isinstance(result, BenchmarkResult)
    assert result.name == "guess"
    assert [record.item_id for record in result.records] == ["a", "b", "c", "d"]
    assert [record.index for record in result.records] == [0, 1, 2, 3]
    assert result.num_examples == 4
    assert result.num_scored == 3
    assert result.num_completed == 2
    assert result.num_errors == 1
    assert result.num_truncated == 1
    # The error counts as 0 over all four examples; truncated items still count in `score`.
    assert result.score == pytest.approx((1 + 0 + 1) / 4)
    assert result.score_completed == pytest.approx((1 + 0) / 2)
    assert result.components == pytest.approx({"correct": 2 / 4, "format": 3 / 4})
    assert result.metadata == {"task": "guessing"}
    assert result.elapsed_seconds >= 0
    failed = result.records[3]
    assert failed == EvaluationRecord(
        index=3, item_id="d", metadata={"error_type": "RuntimeError"}, error="policy crashed"
    )
    assert result.records[2].truncated and result.records[2].metadata == {"guess": 5}
    assert sorted(Guess.closed) == [3, 4, 5, 6]
    json.dumps(result.to_dict())


def test_item_ids_default_to_the_index_and_make_env_errors_are_recorded() -> None:
    items = [{"id": "a", "answer": 3, "guess": 3}, {"id": "z", "answer": None}]
    result = run_benchmark(benchmark(items=items, item_id=None), evaluate)
    assert [record.item_id for record in result.records] == ["0", "1"]
    assert result.records[1].error == "item z has no answer"
    assert result.records[1].metadata == {"error_type": "ValueError"}
    assert result.score == pytest.approx(0.5)


def test_limit_takes_the_first_items_and_rejects_negatives() -> None:
    result = run_benchmark(benchmark(), evaluate, limit=2)
    assert result.num_examples == 2
    assert result.score == pytest.approx(0.5)
    assert result.score_completed == pytest.approx(0.5)
    with pytest.raises(ValueError, match="limit must be non-negative"):
        run_benchmark(benchmark(), evaluate, limit=-1)


def test_empty_benchmark() -> None:
    result = run_benchmark(benchmark(items=[]), evaluate)
    assert (result.score, result.score_completed, result.components, result.num_examples) == (0.0, None, {}, 0)


def test_fail_fast_reraises_and_still_closes_the_env() -> None:
    with pytest.raises(RuntimeError, match="policy crashed"):
        run_benchmark(benchmark(items=[ITEMS[3]]), evaluate, fail_fast=True)
    assert Guess.closed == [6]


def test_async_callbacks_are_rejected_up_front() -> None:
    async def async_evaluate(env: Any) -> Evaluation:
        return Evaluation(Score(1.0))

    class AsyncCallable:
        async def __call__(self, env: Any) -> Evaluation:
            return Evaluation(Score(1.0))

    for callback in (async_evaluate, AsyncCallable()):
        with pytest.raises(TypeError, match="benchmark callback must be synchronous"):
            run_benchmark(benchmark(), callback)  # type: ignore[arg-type]
    assert Guess.closed == []


def test_awaitable_and_wrong_results_are_recorded_as_type_errors() -> None:
    pending: list[Any] = []

    async def later() -> Evaluation:
        return Evaluation(Score(1.0))

    def returns_coroutine(env: Any) -> Any:
        pending.append(later())
        return pending[-1]

    result = run_benchmark(benchmark(items=ITEMS[:1]), returns_coroutine)
    assert result.records[0].metadata == {"error_type": "TypeError"}
    assert "awaitable" in (result.records[0].error or "")
    assert inspect.getcoroutinestate(pending[0]) == inspect.CORO_CLOSED

    result = run_benchmark(benchmark(items=ITEMS[:1]), lambda env: 1.0)  # type: ignore[arg-type,return-value]
    assert result.records[0].error == "evaluation callback must return Evaluation, got float"
    assert Guess.closed == [3, 3]


def test_async_close_is_recorded_as_a_type_error() -> None:
    class AsyncClosing:
        answer = 3

        async def close(self) -> None:
            return None

    result = run_benchmark(
        benchmark(items=ITEMS[:1], make_env=lambda item: AsyncClosing()), lambda env: Evaluation(Score(1.0))
    )
    assert result.records[0].metadata == {"error_type": "TypeError"}
    assert "close() returned an awaitable" in (result.records[0].error or "")
    assert result.num_scored == 0


def test_benchmark_validation() -> None:
    with pytest.raises(ValueError, match="benchmark name must be non-empty"):
        benchmark(name="   ")
    assert benchmark(name=" guess ").name == "guess"
    assert isinstance(benchmark().items, tuple)


def test_evaluation_accepts_numbers() -> None:
    assert Evaluation(1).score == Score(1.0)
    with pytest.raises(TypeError, match="Score or a number"):
        Evaluation("1.0")  # type: ignore[arg-type]


def test_run_benchmarks_runs_each_in_order_and_rejects_duplicates() -> None:
    results = run_benchmarks([benchmark(name="one"), benchmark(name="two")], evaluate, limit=1)
    assert list(results) == ["one", "two"]
    assert all(result.num_examples == 1 and result.score == 1.0 for result in results.values())
    Guess.closed.clear()
    with pytest.raises(ValueError, match="duplicate benchmark name: one"):
        run_benchmarks([benchmark(name="one"), benchmark(name="one")], evaluate)
    assert Guess.closed == []


def test_callback_running_an_async_episode_with_asyncio_run() -> None:
    def evaluate_with_asyncio(env: Any) -> Evaluation:
        async def episode() -> float:
            await asyncio.sleep(0)
            return 1.0

        return Evaluation(Score(asyncio.run(episode())))

    assert run_benchmark(benchmark(items=ITEMS[:2]), evaluate_with_asyncio).score == 1.0


def test_a_failing_close_does_not_hide_the_callback_error() -> None:
    class BrokenClose:
        def close(self) -> None:
            raise OSError("socket already gone")

    def crash(env: Any) -> Evaluation:
        raise RuntimeError("policy crashed")

    result = run_benchmark(benchmark(items=ITEMS[:1], make_env=lambda item: BrokenClose()), crash)
    assert result.records[0].error == "policy crashed"
    with pytest.raises(RuntimeError) as raised:
        run_benchmark(benchmark(items=ITEMS[:1], make_env=lambda item: BrokenClose()), crash, fail_fast=True)
    assert "closing the environment also failed: OSError: socket already gone" in raised.value.__notes__[0]
