"""Environment contracts: ``Env`` (a real ``gymnasium.Env``), ``AsyncEnv`` and single-turn bases.

``AsyncEnv`` keeps Gymnasium's value contract (``reset`` returns ``(observation, info)``,
``step`` returns ``(observation, reward, terminated, truncated, info)``) with coroutine methods.

Environments may expose their reference solution through :meth:`oracle_action`; the
``oracle`` policy calls it once per step. :meth:`null_action` is the "do nothing" action
the ``null`` policy takes.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding

from .display import int_text, safe_repr
from .errors import EnvClosedError, InvalidStepResult
from .forking import AsyncForkableEnv, ForkableEnv
from .scores import Score

__all__ = [
    "AsyncEnv",
    "AsyncSingleTurnEnv",
    "Env",
    "EvaluationResult",
    "SingleTurnEnv",
    "validate_step_result",
]

ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")

Env = gym.Env
"""Synchronous environments are plain Gymnasium environments (``Env is gymnasium.Env``)."""

EvaluationResult = float | Score | tuple[float | Score, dict[str, Any]]


class AsyncEnv(abc.ABC, Generic[ObsT, ActT]):
    """An environment whose ``reset``, ``step`` and ``close`` are coroutines.

    Subclasses set ``action_space`` and ``observation_space`` and call
    ``await super().reset(seed=seed, options=options)`` to seed :attr:`np_random`.
    Calls on one instance must not overlap; run several instances for concurrency.
    """

    metadata: dict[str, Any] = {"render_modes": []}
    action_space: gym.Space[Any]
    observation_space: gym.Space[Any]
    spec: Any = None
    _np_random: np.random.Generator | None = None
    _np_random_seed: int | None = None

    @abc.abstractmethod
    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsT, dict[str, Any]]:
        """Start an episode; seeds :attr:`np_random` when ``seed`` is given."""
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        return None, {}  # type: ignore[return-value]

    @abc.abstractmethod
    async def step(self, action: ActT) -> tuple[ObsT, float, bool, bool, dict[str, Any]]:
        """Apply ``action``; return ``(observation, reward, terminated, truncated, info)``."""

    async def close(self) -> None:
        """Release resources. Must be safe to call more than once."""

    @property
    def np_random(self) -> np.random.Generator:
        """The episode's random generator (seeded lazily with a random seed)."""
        if self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random()
        return self._np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random = value
        self._np_random_seed = -1

    @property
    def np_random_seed(self) -> int:
        """The seed of :attr:`np_random` (``-1`` when it was set directly)."""
        if self._np_random_seed is None:
            self._np_random, self._np_random_seed = seeding.np_random()
        return self._np_random_seed

    @property
    def unwrapped(self) -> AsyncEnv[Any, Any]:
        """The innermost environment (wrappers override this)."""
        return self

    def __repr__(self) -> str:
        return f"<{type(self).__name__} instance>"


def _finite_float(number: Any) -> float:
    """``float(number)``; ``inf`` for an int past the float range (the caller refuses it as not finite)."""
    try:
        return float(number)
    except OverflowError:
        return math.inf


def _resolve_evaluation(result: EvaluationResult) -> tuple[float, dict[str, Any]]:
    info: dict[str, Any] = {}
    if isinstance(result, tuple):
        if len(result) != 2 or not isinstance(result[1], Mapping):
            raise TypeError("evaluate() must return a float, a Score, or (float | Score, info dict)")
        result, extra = result
        info.update(extra)
    if isinstance(result, Score):
        info.update(result.as_info())
        reward = result.value
    else:
        reward = _finite_float(result)
    if not math.isfinite(reward):
        shown = int_text(result) if isinstance(result, int) else repr(reward)
        raise InvalidStepResult(f"evaluate() returned a non-finite reward {shown}; rewards must be finite")
    return reward, info


_NOT_ACTIVE = "reset() must be called before step() and after an episode ends"


class SingleTurnEnv(ForkableEnv, gym.Env[ObsT, ActT], abc.ABC):
    """A one-step environment: ``reset`` shows a prompt, ``step`` grades the answer.

    Implement :meth:`initial_observation` and :meth:`evaluate`; optionally
    :meth:`terminal_observation`. ``step`` always terminates the episode.

    It forks (:class:`~rolloutgym_protocol.ForkableEnv`): its state is whether the answer is
    still due. A subclass whose prompt depends on more than its task (drawn at ``reset``)
    adds that to ``_snapshot_state``/``_restore_state``.
    """

    _episode_active: bool = False
    # np_random is seeded when first read: most single-turn envs never draw from it, and seeding
    # a NumPy generator at every reset(seed=...) cost ~13 µs of a ~60 µs graded reply (issue 49).
    # Whoever reads it (np_random, np_random_seed, _np_random, a fork's snapshot) gets the
    # generator, seed and state an eager seeding gives.
    _seed_pending: int | None = None
    _generator: np.random.Generator | None = None
    _generator_seed: int | None = None

    def _draw_pending_seed(self) -> None:
        self._generator, self._generator_seed = seeding.np_random(self._seed_pending)
        self._seed_pending = None

    @property
    def _np_random(self) -> np.random.Generator | None:  # type: ignore[override]
        if self._seed_pending is not None:
            self._draw_pending_seed()
        return self._generator

    @_np_random.setter
    def _np_random(self, value: np.random.Generator | None) -> None:
        self._seed_pending = None
        self._generator = value

    @property
    def _np_random_seed(self) -> int | None:  # type: ignore[override]
        if self._seed_pending is not None:
            self._draw_pending_seed()
        return self._generator_seed

    @_np_random_seed.setter
    def _np_random_seed(self, value: int | None) -> None:
        self._seed_pending = None
        self._generator_seed = value

    def _snapshot_state(self) -> dict[str, Any]:
        return {"active": self._episode_active}

    def _restore_state(self, data: dict[str, Any]) -> None:
        self._episode_active = bool(data["active"])

    @abc.abstractmethod
    def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[ObsT, dict[str, Any]]:
        """Return the prompt observation and its info."""

    @abc.abstractmethod
    def evaluate(self, action: ActT) -> EvaluationResult:
        """Grade ``action``: a float, a :class:`Score`, or ``(value, info)``."""

    def terminal_observation(self, action: ActT) -> ObsT:
        """The observation after the answer (defaults to the action itself)."""
        return action  # type: ignore[return-value]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[ObsT, dict[str, Any]]:
        if type(seed) is int and seed >= 0:
            self._seed_pending = seed  # seeded when first read (see _np_random)
        else:
            super().reset(seed=seed)  # None, or a seed gymnasium refuses (its error)
        observation, info = self.initial_observation(options=options)
        self._episode_active = True
        return observation, dict(info)

    def step(self, action: ActT) -> tuple[ObsT, float, bool, bool, dict[str, Any]]:
        if not self._episode_active:
            raise RuntimeError(_NOT_ACTIVE)
        reward, info = _resolve_evaluation(self.evaluate(action))
        observation = self.terminal_observation(action)
        self._episode_active = False
        return observation, reward, True, False, info


class AsyncSingleTurnEnv(AsyncForkableEnv, AsyncEnv[ObsT, ActT], abc.ABC):
    """The async twin of :class:`SingleTurnEnv`; hooks may be coroutines. It forks as :class:`SingleTurnEnv` does."""

    _episode_active: bool = False

    async def _snapshot_state(self) -> dict[str, Any]:
        return {"active": self._episode_active}

    async def _restore_state(self, data: dict[str, Any]) -> None:
        self._episode_active = bool(data["active"])

    @abc.abstractmethod
    async def initial_observation(self, *, options: dict[str, Any] | None) -> tuple[ObsT, dict[str, Any]]:
        """Return the prompt observation and its info."""

    @abc.abstractmethod
    async def evaluate(self, action: ActT) -> EvaluationResult:
        """Grade ``action``: a float, a :class:`Score`, or ``(value, info)``."""

    async def terminal_observation(self, action: ActT) -> ObsT:
        """The observation after the answer (defaults to the action itself)."""
        return action  # type: ignore[return-value]

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsT, dict[str, Any]]:
        await super().reset(seed=seed, options=options)
        observation, info = await self.initial_observation(options=options)
        self._episode_active = True
        return observation, dict(info)

    async def step(self, action: ActT) -> tuple[ObsT, float, bool, bool, dict[str, Any]]:
        if not self._episode_active:
            raise RuntimeError(_NOT_ACTIVE)
        reward, info = _resolve_evaluation(await self.evaluate(action))
        observation = await self.terminal_observation(action)
        self._episode_active = False
        return observation, reward, True, False, info


def validate_step_result(
    result: Any, *, env: Any = None, step_index: int | None = None
) -> tuple[Any, float, bool, bool, dict[str, Any]]:
    """Check a ``step`` result and return it with ``reward`` as a Python float.

    Raises:
        InvalidStepResult: naming the environment and step when the result is not a
            5-tuple, the reward is not a finite number, a flag is not a bool, or info
            is not a dict.
    """
    where = f"{type(env).__name__ if env is not None else 'environment'}.step()"
    if step_index is not None:
        where += f" at step {step_index}"
    if not isinstance(result, tuple) or len(result) != 5:
        raise InvalidStepResult(
            f"{where} returned {type(result).__name__}, expected a 5-tuple "
            "(observation, reward, terminated, truncated, info)"
        )
    observation, reward, terminated, truncated, info = result
    if isinstance(reward, (bool, np.bool_)) or not isinstance(reward, (int, float, np.integer, np.floating)):
        raise InvalidStepResult(
            f"{where} returned reward {safe_repr(reward)[:200]} ({type(reward).__name__}); rewards must be numbers"
        )
    number = _finite_float(reward)
    if not math.isfinite(number):
        shown = int_text(reward) if isinstance(reward, int) else repr(number)
        raise InvalidStepResult(f"{where} returned reward {shown}; rewards must be finite")
    reward = number
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if not isinstance(flag, (bool, np.bool_)):
            raise InvalidStepResult(
                f"{where} returned {name}={safe_repr(flag)[:200]} ({type(flag).__name__}); flags must be bool"
            )
    if not isinstance(info, dict):
        raise InvalidStepResult(f"{where} returned info of type {type(info).__name__}; info must be a dict")
    return observation, reward, bool(terminated), bool(truncated), info


def _closed_error(env: Any) -> EnvClosedError:
    return EnvClosedError(f"environment {type(env).__name__} is closed; create a new one")
