"""Async wrappers: the async twins of Gymnasium's wrapper classes."""

from __future__ import annotations

import abc
from typing import Any, Generic, TypeVar

from . import forking
from .envs import AsyncEnv

__all__ = [
    "AsyncActionWrapper",
    "AsyncObservationWrapper",
    "AsyncRewardWrapper",
    "AsyncWrapper",
    "find_attribute",
]


ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")
WrapperObsT = TypeVar("WrapperObsT")
WrapperActT = TypeVar("WrapperActT")


class AsyncWrapper(AsyncEnv[WrapperObsT, WrapperActT], Generic[WrapperObsT, WrapperActT, ObsT, ActT]):
    """Delegates ``reset``/``step``/``close`` to ``env``; subclasses override pieces."""

    def __init__(self, env: AsyncEnv[Any, Any]) -> None:
        self.env = env
        self.action_space = env.action_space
        self.observation_space = env.observation_space
        self.metadata = env.metadata

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        return await self.env.reset(seed=seed, options=options)

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return await self.env.step(action)

    async def close(self) -> None:
        await self.env.close()

    @property
    def unwrapped(self) -> AsyncEnv[Any, Any]:
        return self.env.unwrapped

    @property
    def np_random(self) -> Any:  # type: ignore[override]
        return self.env.np_random

    async def snapshot(self) -> Any:
        """The wrapped env's :meth:`~rolloutgym_protocol.AsyncForkableEnv.snapshot` (``NotForkable`` if it has none)."""
        return await forking.asnapshot(self)

    async def restore(self, state: Any) -> None:
        """Restore the wrapped env from ``state``."""
        await forking.arestore(self, state)

    async def fork(self, n: int = 1) -> list[Any]:
        """``n`` independent forks of the wrapped env, each wrapped like this one (the wrapper copied shallowly)."""
        return await forking.afork(self, n)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)


class AsyncActionWrapper(AsyncWrapper[ObsT, WrapperActT, ObsT, ActT], abc.ABC, Generic[ObsT, WrapperActT, ActT]):
    """Transforms the action with the async :meth:`action` hook before stepping."""

    @abc.abstractmethod
    async def action(self, action: Any) -> Any: ...

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return await self.env.step(await self.action(action))


class AsyncObservationWrapper(AsyncWrapper[WrapperObsT, ActT, ObsT, ActT], abc.ABC, Generic[WrapperObsT, ActT, ObsT]):
    """Transforms observations from ``reset`` and ``step`` with :meth:`observation`."""

    @abc.abstractmethod
    async def observation(self, observation: Any) -> Any: ...

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = await self.env.reset(seed=seed, options=options)
        return await self.observation(observation), info

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = await self.env.step(action)
        return await self.observation(observation), reward, terminated, truncated, info


class AsyncRewardWrapper(AsyncWrapper[ObsT, ActT, ObsT, ActT], abc.ABC, Generic[ObsT, ActT]):
    """Transforms rewards with the async :meth:`reward` hook."""

    @abc.abstractmethod
    async def reward(self, reward: float) -> float: ...

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = await self.env.step(action)
        return observation, float(await self.reward(reward)), terminated, truncated, info


def find_attribute(env: Any, name: str) -> Any:
    """Find ``name`` on ``env`` or any environment it wraps (sync, async or adapted).

    Returns ``None`` when no layer has it.
    """
    seen: set[int] = set()
    current = env
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        attribute = getattr(type(current), name, None)
        if attribute is not None:
            return getattr(current, name)
        if name in getattr(current, "__dict__", {}):
            return current.__dict__[name]
        current = getattr(current, "env", None) if "env" in getattr(current, "__dict__", {}) else None
    return None
