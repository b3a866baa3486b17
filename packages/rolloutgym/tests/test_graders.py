"""Graders: aggregations, CompositeGrader, LLMGrader, grading wrappers, Score round trips."""

from __future__ import annotations

import asyncio
import functools
import gc
import inspect
import json
import math
import threading
import warnings
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rolloutgym.graders import (
    AsyncGradingWrapper,
    CompositeGrader,
    Criterion,
    GradingWrapper,
    LLMGrader,
    Rubric,
    Score,
    all_pass,
    asymmetric_mean,
    weighted_mean,
    weighted_sum,
)
from rolloutgym_protocol import AsyncEnv


def make_rubric(*specs: tuple[str, float, str], rubric_id: str | None = "demo") -> Rubric:
    return Rubric(
        id=rubric_id,
        criteria=[
            Criterion(id=name, description=f"criterion {name}", weight=weight, kind=kind)
            for name, weight, kind in specs
        ],
    )


def scores(**values: float) -> dict[str, Score]:
    return {name: Score(value) for name, value in values.items()}


TWO = make_rubric(("a", 2.0, "required"), ("b", 1.0, "required"))


# --------------------------------------------------------------------------- aggregations


def test_weighted_sum_multiplies_weights_and_ignores_extra_components() -> None:
    assert weighted_sum(TWO, scores(a=1.0, b=0.5, extra=100.0)) == pytest.approx(2.5)


def test_weighted_mean_divides_by_total_weight() -> None:
    assert weighted_mean(TWO, scores(a=1.0, b=0.0)) == pytest.approx(2 / 3)


def test_weighted_mean_with_only_zero_weights_is_an_error() -> None:
    rubric = make_rubric(("a", 0.0, "required"))
    with pytest.raises(ValueError, match="weighted mean requires at least one positive weight"):
        weighted_mean(rubric, scores(a=1.0))


def test_missing_component_raises_key_error_naming_the_criterion() -> None:
    with pytest.raises(KeyError, match="'b'"):
        weighted_sum(TWO, scores(a=1.0))


def test_all_pass_requires_every_value_at_least_one() -> None:
    assert all_pass(TWO, scores(a=1.0, b=1.5)) == 1.0
    assert all_pass(TWO, scores(a=1.0, b=0.99)) == 0.0


def test_asymmetric_mean_probe() -> None:
    rubric = make_rubric(
        ("r1", 2.0, "required"), ("r2", 1.0, "required"), ("bonus", 1.0, "bonus"), ("safe", 3.0, "penalty")
    )
    value = asymmetric_mean(rubric, scores(r1=1.0, r2=0.0, bonus=0.5, safe=0.0))
    assert value == pytest.approx(2 / 3 + 0.5 - 1.0)
    assert round(value, 4) == 0.1667


def test_asymmetric_mean_simple_case_and_weights() -> None:
    rubric = make_rubric(("r", 1.0, "required"), ("bonus", 1.0, "bonus"), ("safe", 1.0, "penalty"))
    components = scores(r=1.0, bonus=0.5, safe=0.0)
    assert asymmetric_mean(rubric, components) == pytest.approx(0.5)
    assert asymmetric_mean(rubric, components, bonus_weight=2.0, penalty_weight=0.5) == pytest.approx(1.5)


def test_asymmetric_mean_absent_kinds_count_zero_and_result_is_not_clamped() -> None:
    only_penalty = make_rubric(("safe", 1.0, "penalty"))
    assert asymmetric_mean(only_penalty, scores(safe=0.0)) == pytest.approx(-1.0)
    zero_weight_bonus = make_rubric(("r", 1.0, "required"), ("bonus", 0.0, "bonus"))
    assert asymmetric_mean(zero_weight_bonus, scores(r=1.0, bonus=1.0)) == pytest.approx(1.0)


def test_asymmetric_mean_rejects_unknown_kinds_and_bad_weights() -> None:
    with pytest.raises(ValueError, match="unsupported criterion kinds: optional"):
        asymmetric_mean(make_rubric(("a", 1.0, "optional")), scores(a=1.0))
    with pytest.raises(ValueError, match="bonus_weight"):
        asymmetric_mean(TWO, scores(a=1.0, b=1.0), bonus_weight=-1.0)
    with pytest.raises(ValueError, match="penalty_weight"):
        asymmetric_mean(TWO, scores(a=1.0, b=1.0), penalty_weight=math.inf)


# --------------------------------------------------------------------------- CompositeGrader


def test_composite_default_grader_with_override_gets_input_and_criterion() -> None:
    calls: list[tuple[Any, str]] = []

    def default(input: Any, criterion: Criterion) -> float:
        calls.append((input, criterion.id))
        return 1.0

    grader = CompositeGrader(default, overrides={"b": lambda input, criterion: Score(0.0, feedback="wrong")})
    result = grader("answer", TWO)
    assert calls == [("answer", "a")]
    assert result.value == pytest.approx(2 / 3)
    assert result.component_values == {"a": 1.0, "b": 0.0}
    assert result.components["b"].feedback == "wrong"
    assert grader.names == ("b",)


def test_composite_mapping_form_merges_overrides_and_reports_metadata() -> None:
    grader = CompositeGrader(
        {"a": lambda i, c: 0.0, "b": lambda i, c: 1.0},
        overrides={"a": lambda i, c: 1.0},
        aggregate=all_pass,
        metadata={"judge": "rules"},
    )
    result = grader.score(None, TWO)
    assert result.value == 1.0
    assert result.metadata == {"judge": "rules", "rubric_fingerprint": TWO.fingerprint, "rubric_id": "demo"}
    assert set(grader.names) == {"a", "b"}


def test_composite_without_rubric_id_records_only_the_fingerprint() -> None:
    rubric = make_rubric(("a", 1.0, "required"), rubric_id=None)
    result = CompositeGrader(lambda i, c: 1.0).score(None, rubric)
    assert result.metadata == {"rubric_fingerprint": rubric.fingerprint}


def test_composite_construction_errors() -> None:
    with pytest.raises(TypeError, match="grader must be callable or a mapping of graders"):
        CompositeGrader(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a composite grader requires at least one grader"):
        CompositeGrader({})
    with pytest.raises(ValueError, match="non-empty"):
        CompositeGrader({"": lambda i, c: 1.0})
    with pytest.raises(ValueError, match="non-empty"):
        CompositeGrader(lambda i, c: 1.0, overrides={" ": lambda i, c: 1.0})


def test_composite_names_missing_criteria() -> None:
    rubric = make_rubric(("a", 1.0, "required"), ("b", 1.0, "required"), ("c", 1.0, "required"))
    grader = CompositeGrader({"a": lambda i, c: 1.0})
    with pytest.raises(ValueError, match="no grader configured for rubric criteria: b, c"):
        grader.score(None, rubric)
    with pytest.raises(ValueError, match="no grader configured for rubric criteria: b, c"):
        asyncio.run(grader.ascore(None, rubric))


@pytest.mark.parametrize("bad_result", ["0.5", None, object()])
def test_composite_rejects_non_numeric_results(bad_result: Any) -> None:
    grader = CompositeGrader({"a": lambda i, c: 1.0, "b": lambda i, c: bad_result})
    with pytest.raises(TypeError, match="grader 'b' did not return a numeric score"):
        grader.score(None, TWO)


def test_composite_score_rejects_awaitables_and_closes_them() -> None:
    pending: list[Any] = []

    async def slow(input: Any, criterion: Criterion) -> float:
        return 1.0

    def grader_returning_coroutine(input: Any, criterion: Criterion) -> Any:
        coroutine = slow(input, criterion)
        pending.append(coroutine)
        return coroutine

    grader = CompositeGrader({"a": lambda i, c: 1.0, "b": grader_returning_coroutine})
    with pytest.raises(TypeError, match=r"grader 'b' returned an awaitable; use ascore\(\)"):
        grader.score(None, TWO)
    assert inspect.getcoroutinestate(pending[0]) == inspect.CORO_CLOSED


def test_composite_ascore_runs_graders_concurrently() -> None:
    rubric = make_rubric(*((name, 1.0, "required") for name in "abcd"))
    running = 0
    peak = 0

    async def sleepy(input: Any, criterion: Criterion) -> float:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return 1.0

    result = asyncio.run(CompositeGrader(sleepy).ascore("x", rubric))
    assert peak == 4
    assert result.value == 1.0
    assert list(result.components) == ["a", "b", "c", "d"]


def test_composite_ascore_calls_sync_graders_inline() -> None:
    threads: list[threading.Thread] = []

    def sync_grader(input: Any, criterion: Criterion) -> float:
        threads.append(threading.current_thread())
        return 0.5

    async def async_grader(input: Any, criterion: Criterion) -> Score:
        return Score(1.0)

    result = asyncio.run(CompositeGrader(sync_grader, overrides={"a": async_grader}).ascore(None, TWO))
    assert threads == [threading.main_thread()]
    assert result.component_values == {"a": 1.0, "b": 0.5}


def test_composite_ascore_cancels_siblings_when_one_fails() -> None:
    finished: list[str] = []

    async def slow(input: Any, criterion: Criterion) -> float:
        await asyncio.sleep(1.0)
        finished.append(criterion.id)
        return 1.0

    async def broken(input: Any, criterion: Criterion) -> float:
        raise RuntimeError("judge unavailable")

    grader = CompositeGrader(slow, overrides={"b": broken})

    async def main() -> None:
        with pytest.raises(RuntimeError, match="judge unavailable"):
            await grader.ascore(None, TWO)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert finished == []


# --------------------------------------------------------------------------- LLMGrader


def render(input: Any, rubric: Any) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Grade {input!r} against {getattr(rubric, 'id', rubric)}"}]


def parse_score(text: str, rubric: Any) -> Score:
    value, _, feedback = text.partition("|")
    return Score(float(value), {"parsed": float(value)}, {"source": "parser"}, feedback=feedback or None)


def test_llm_grader_with_sync_sampler() -> None:
    chats: list[Any] = []

    def sample(chat: Any) -> str:
        chats.append(chat)
        return "0.75|mostly right"

    grader = LLMGrader(sample=sample, render=render, parse=parse_score, metadata={"source": "grader", "model": "m"})
    result = grader("42", TWO)
    assert isinstance(result, Score)
    assert result == grader.score("42", TWO)
    assert chats[0] == [{"role": "user", "content": "Grade '42' against demo"}]
    assert result.value == 0.75
    assert result.feedback == "mostly right"
    assert result.component_values == {"parsed": 0.75}
    assert result.metadata == {
        "source": "parser",
        "model": "m",
        "rubric_fingerprint": TWO.fingerprint,
        "rubric_id": "demo",
    }
    assert asyncio.run(grader.ascore("42", TWO)) == result


def test_llm_grader_with_plain_string_rubric_adds_no_rubric_metadata() -> None:
    grader = LLMGrader(sample=lambda chat: "1", render=render, parse=lambda text, rubric: float(text))
    assert grader.score("x", "be correct") == Score(1.0)


def test_llm_grader_with_async_sampler() -> None:
    async def sample(chat: Any) -> str:
        await asyncio.sleep(0)
        return "1"

    grader = LLMGrader(sample=sample, render=render, parse=lambda text, rubric: float(text))
    assert asyncio.run(grader.ascore("x", TWO)).value == 1.0

    async def via_call() -> Any:
        pending = grader("x", TWO)
        assert inspect.isawaitable(pending)
        return await pending

    assert asyncio.run(via_call()).metadata["rubric_id"] == "demo"


def test_llm_grader_score_rejects_async_sampler_and_closes_the_sample() -> None:
    pending: list[Any] = []

    async def answer() -> str:
        return "1"

    def sample(chat: Any) -> Any:
        coroutine = answer()
        pending.append(coroutine)
        return coroutine

    grader = LLMGrader(sample=sample, render=render, parse=lambda text, rubric: float(text))
    with pytest.raises(TypeError, match=r"LLM grader returned an awaitable; use ascore\(\)"):
        grader.score("x", TWO)
    assert inspect.getcoroutinestate(pending[0]) == inspect.CORO_CLOSED


def test_llm_grader_rejects_non_string_samples_and_unparsed_text() -> None:
    grader = LLMGrader(sample=lambda chat: 1.0, render=render, parse=lambda text, rubric: 1.0)
    with pytest.raises(TypeError, match="LLM grader sample callable must return a string"):
        grader.score("x", TWO)
    lazy = LLMGrader(sample=lambda chat: "1", render=render, parse=lambda text, rubric: text)
    with pytest.raises(TypeError, match="did not return a numeric score"):
        lazy.score("x", TWO)


def test_llm_grader_inside_composite_grader() -> None:
    async def sample(chat: Any) -> str:
        return "0.5"

    judge = LLMGrader(sample=sample, render=render, parse=lambda text, rubric: float(text))
    composite = CompositeGrader(judge, overrides={"a": lambda i, c: 1.0})
    assert asyncio.run(composite.ascore("x", TWO)).component_values == {"a": 1.0, "b": 0.5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="grader 'b' returned an awaitable"):
            composite.score("x", TWO)
        gc.collect()


# --------------------------------------------------------------------------- grading wrappers


class Counter(gym.Env[int, int]):
    """Counts actions; the episode terminates after ``length`` steps with reward 0.25 each."""

    def __init__(self, length: int = 2) -> None:
        self.action_space = gym.spaces.Discrete(10)
        self.observation_space = gym.spaces.Discrete(100)
        self.length = length
        self.total = 0
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.total = 0
        self.steps = 0
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        self.total += int(action)
        self.steps += 1
        return self.total, 0.25, self.steps >= self.length, False, {"steps": self.steps, "score": "stale"}


class AsyncCounter(AsyncEnv[int, int]):
    """The async twin of :class:`Counter`."""

    def __init__(self, length: int = 2) -> None:
        self.action_space = gym.spaces.Discrete(10)
        self.observation_space = gym.spaces.Discrete(100)
        self.length = length
        self.total = 0
        self.steps = 0

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        await super().reset(seed=seed, options=options)
        self.total = 0
        self.steps = 0
        return 0, {}

    async def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        self.total += int(action)
        self.steps += 1
        return self.total, 0.25, self.steps >= self.length, False, {"steps": self.steps}


def total_is_five(input: Any, rubric: Any) -> Score:
    return Score(1.0 if input == 5 else 0.0, feedback=f"total {input}")


def test_grading_wrapper_grades_only_the_final_step() -> None:
    seen_envs: list[Any] = []

    def make_input(env: Any, action: Any) -> int:
        seen_envs.append(env)
        return env.total

    inner = Counter()
    env = GradingWrapper(inner, rubric=TWO, grader=total_is_five, make_input=make_input)
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(2)
    assert (observation, reward, terminated, info) == (2, 0.25, False, {"steps": 1, "score": "stale"})
    observation, reward, terminated, truncated, info = env.step(3)
    assert seen_envs == [inner]
    assert reward == 1.0 and terminated and not truncated
    assert info["steps"] == 2
    assert info["score"] == {
        "value": 1.0,
        "components": {},
        "metadata": {"rubric_fingerprint": TWO.fingerprint, "rubric_id": "demo"},
        "feedback": "total 5",
    }
    assert Score.from_info(info) is not None


def test_grading_wrapper_custom_when_and_combine_reward() -> None:
    env = GradingWrapper(
        Counter(length=3),
        rubric="the total must be five",
        grader=lambda input, rubric: 0.5,
        make_input=lambda env, action: action,
        when=lambda terminated, truncated: True,
        combine_reward=lambda reward, score: reward + score.value,
    )
    env.reset()
    _, reward, _, _, info = env.step(1)
    assert reward == pytest.approx(0.75)
    assert info["score"] == {"value": 0.5, "components": {}, "metadata": {}}


def test_grading_wrapper_grades_truncated_episodes_of_a_registered_env() -> None:
    inner = gym.make("CartPole-v1", max_episode_steps=2)
    env = GradingWrapper(inner, rubric=TWO, grader=lambda input, rubric: 0.3, make_input=lambda env, action: action)
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step(0)
    assert reward == 1.0 and "score" not in info
    _, reward, terminated, truncated, info = env.step(0)
    assert truncated and not terminated
    assert reward == pytest.approx(0.3)
    assert info["score"]["value"] == pytest.approx(0.3)
    env.close()


def test_sync_grading_wrapper_rejects_an_awaitable_grader() -> None:
    pending: list[Any] = []

    async def judge(input: Any, rubric: Any) -> float:
        return 1.0

    def grader(input: Any, rubric: Any) -> Any:
        pending.append(judge(input, rubric))
        return pending[-1]

    env = GradingWrapper(Counter(length=1), rubric=TWO, grader=grader, make_input=lambda env, action: action)
    env.reset()
    with pytest.raises(TypeError, match="synchronous grading wrapper received an awaitable; use AsyncGradingWrapper"):
        env.step(1)
    assert inspect.getcoroutinestate(pending[0]) == inspect.CORO_CLOSED


def test_async_grading_wrapper_with_async_and_sync_graders() -> None:
    async def judge(input: Any, rubric: Any) -> Score:
        await asyncio.sleep(0)
        return total_is_five(input, rubric)

    async def episode(grader: Any) -> tuple[list[float], dict[str, Any]]:
        inner = AsyncCounter()
        env = AsyncGradingWrapper(inner, rubric=TWO, grader=grader, make_input=lambda env, action: env.total)
        await env.reset(seed=0)
        rewards = []
        info: dict[str, Any] = {}
        for action in (4, 1):
            _, reward, _, _, info = await env.step(action)
            rewards.append(reward)
        await env.close()
        return rewards, info

    for grader in (judge, total_is_five):
        rewards, info = asyncio.run(episode(grader))
        assert rewards == [0.25, 1.0]
        assert info["score"]["metadata"]["rubric_id"] == "demo"
        assert info["steps"] == 2


def test_async_grading_wrapper_with_llm_grader() -> None:
    async def sample(chat: Any) -> str:
        return "0.0|wrong total" if "'3'" in chat[0]["content"] else "1.0"

    judge = LLMGrader(sample=sample, render=render, parse=parse_score)

    async def main() -> tuple[float, dict[str, Any]]:
        env = AsyncGradingWrapper(
            AsyncCounter(length=1), rubric=TWO, grader=judge, make_input=lambda env, action: str(action)
        )
        await env.reset()
        _, reward, _, _, info = await env.step(3)
        return reward, info

    reward, info = asyncio.run(main())
    assert reward == 0.0
    assert info["score"]["feedback"] == "wrong total"


# --------------------------------------------------------------------------- Score round trips

names = st.text(min_size=1, max_size=8)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False)
)
finite_values = st.floats(allow_nan=False, allow_infinity=False)
feedbacks = st.none() | st.text(max_size=12).map(str.strip).filter(bool)


def score_strategy() -> st.SearchStrategy[Score]:
    def build(children: st.SearchStrategy[dict[str, Score]]) -> st.SearchStrategy[Score]:
        return st.builds(
            lambda value, components, metadata, feedback: Score(value, components, metadata, feedback=feedback),
            finite_values,
            children,
            st.dictionaries(names, json_scalars, max_size=3),
            feedbacks,
        )

    leaves = build(st.just({}))
    return st.recursive(leaves, lambda inner: build(st.dictionaries(names, inner, max_size=3)), max_leaves=12)


@given(score_strategy())
def test_score_dict_round_trip(score: Score) -> None:
    assert Score.from_dict(score.to_dict()) == score
    assert Score.from_info(score.as_info()) == score
    assert Score.from_dict(json.loads(json.dumps(score.to_dict()))) == score


@given(score_strategy())
def test_score_to_dict_only_has_feedback_when_set(score: Score) -> None:
    assert ("feedback" in score.to_dict()) == (score.feedback is not None)


def test_partial_asymmetric_mean_is_an_aggregator() -> None:
    rubric = make_rubric(("r", 1.0, "required"), ("bonus", 1.0, "bonus"))
    grader = CompositeGrader(lambda i, c: 1.0, aggregate=functools.partial(asymmetric_mean, bonus_weight=0.5))
    assert grader.score(None, rubric).value == pytest.approx(1.5)
