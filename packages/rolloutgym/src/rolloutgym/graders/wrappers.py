"""Grading wrappers: score an episode inside ``step`` and turn the score into the reward.

:class:`GradingWrapper` wraps a Gymnasium env, :class:`AsyncGradingWrapper` an
:class:`~rolloutgym_protocol.AsyncEnv`. When ``when(terminated, truncated)`` holds (by
default: the episode ended), the wrapper calls
``grader(make_input(inner_env, action), rubric)``, puts ``{"score": score.to_dict()}``
into the step's info and replaces the reward with ``combine_reward(reward, score)``
(by default ``score.value``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, SupportsFloat, TypeVar

import gymnasium as gym
from rolloutgym_protocol import AsyncEnv, AsyncWrapper, Grader, Score

from ._common import discard_awaitable, is_awaitable, to_score, with_rubric_metadata

__all__ = ["AsyncGradingWrapper", "GradingWrapper"]

StepResult = tuple[Any, float, bool, bool, dict[str, Any]]
MakeInput = Callable[[Any, Any], Any]
"""``make_input(inner_env, action) -> grader input``."""
When = Callable[[bool, bool], bool]
"""``when(terminated, truncated) -> bool``: whether to grade this step."""
CombineReward = Callable[[float, Score], SupportsFloat]
"""``combine_reward(env_reward, score) -> reward``."""


def _episode_ended(terminated: bool, truncated: bool) -> bool:
    return bool(terminated or truncated)


def _replace_reward(reward: float, score: Score) -> float:
    return score.value


class _GradingConfig:
    """The settings and score bookkeeping shared by the sync and async wrappers."""

    def __init__(
        self, rubric: Any, grader: Grader, make_input: MakeInput, when: When, combine_reward: CombineReward
    ) -> None:
        for name, function in (
            ("grader", grader),
            ("make_input", make_input),
            ("when", when),
            ("combine_reward", combine_reward),
        ):
            if not callable(function):
                raise TypeError(f"grading wrapper {name} must be callable, got {type(function).__name__}")
        self.rubric = rubric
        self.grader = grader
        self.make_input = make_input
        self.when = when
        self.combine_reward = combine_reward

    def apply(self, step: StepResult, result: Any) -> StepResult:
        observation, reward, terminated, truncated, info = step
        score = with_rubric_metadata(to_score(result, "grader did not return a numeric score"), self.rubric)
        graded_info = dict(info)
        graded_info["score"] = score.to_dict()
        return observation, float(self.combine_reward(reward, score)), terminated, truncated, graded_info


ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")
InputT = TypeVar("InputT")
RubricT = TypeVar("RubricT")


class GradingWrapper(gym.Wrapper[ObsT, ActT, ObsT, ActT], Generic[ObsT, ActT, InputT, RubricT]):
    """A Gymnasium wrapper that grades the episode and rewards the score.

    Args:
        env: the environment to wrap.
        rubric: passed to the grader as is (a :class:`~rolloutgym_protocol.Rubric` or anything
            the grader understands, such as an instruction string).
        grader: a synchronous grader, ``grader(input, rubric) -> float | Score``.
        make_input: builds the grader input from the inner env and the action.
        when: decides which steps are graded; by default terminated or truncated ones.
        combine_reward: the reward of a graded step; by default ``score.value``.

    Steps that are not graded pass through with their reward converted to ``float``.

    Raises:
        TypeError: (in ``step``) the grader returned an awaitable; use
            :class:`AsyncGradingWrapper` for asynchronous graders.
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        *,
        rubric: Any,
        grader: Grader,
        make_input: MakeInput,
        when: When = _episode_ended,
        combine_reward: CombineReward = _replace_reward,
    ) -> None:
        super().__init__(env)
        self._grading = _GradingConfig(rubric, grader, make_input, when, combine_reward)

    @property
    def rubric(self) -> Any:
        """The rubric handed to the grader."""
        return self._grading.rubric

    def step(self, action: Any) -> StepResult:
        observation, reward, terminated, truncated, info = self.env.step(action)
        step: StepResult = (observation, float(reward), terminated, truncated, info)
        if not self._grading.when(terminated, truncated):
            return step
        result = self._grading.grader(self._grading.make_input(self.env, action), self._grading.rubric)
        if is_awaitable(result):
            discard_awaitable(result)
            raise TypeError("synchronous grading wrapper received an awaitable; use AsyncGradingWrapper")
        return self._grading.apply(step, result)


class AsyncGradingWrapper(AsyncWrapper[ObsT, ActT, ObsT, ActT], Generic[ObsT, ActT, InputT, RubricT]):
    """The async twin of :class:`GradingWrapper` for :class:`~rolloutgym_protocol.AsyncEnv`.

    Accepts synchronous and asynchronous graders (an awaitable result is awaited).
    Arguments are the same as :class:`GradingWrapper`'s.
    """

    def __init__(
        self,
        env: AsyncEnv[Any, Any],
        *,
        rubric: Any,
        grader: Grader,
        make_input: MakeInput,
        when: When = _episode_ended,
        combine_reward: CombineReward = _replace_reward,
    ) -> None:
        super().__init__(env)
        self._grading = _GradingConfig(rubric, grader, make_input, when, combine_reward)

    @property
    def rubric(self) -> Any:
        """The rubric handed to the grader."""
        return self._grading.rubric

    async def step(self, action: Any) -> StepResult:
        observation, reward, terminated, truncated, info = await self.env.step(action)
        step: StepResult = (observation, float(reward), terminated, truncated, info)
        if not self._grading.when(terminated, truncated):
            return step
        result = self._grading.grader(self._grading.make_input(self.env, action), self._grading.rubric)
        if is_awaitable(result):
            result = await result
        return self._grading.apply(step, result)
