"""Adapters keep the async value contract and clean up after themselves (issue 17, class 8)."""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from rolloutgym_protocol import AsyncEnv, AsyncFromSync, SyncFromAsync, as_async, as_sync
from rolloutgym_protocol.errors import InvalidStepResult


class LooseTypes(gym.Env):
    """A valid gym env that returns an int reward and numpy.bool_ flags, as gym allows."""

    action_space = gym.spaces.Discrete(2)
    observation_space = gym.spaces.Discrete(2)

    def __init__(self, reward: Any = 1) -> None:
        self.reward = reward

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 1, self.reward, np.bool_(True), np.False_, {}


@pytest.mark.parametrize("reward", [1, np.int64(2), np.float32(0.5), 0])
def test_async_from_sync_step_returns_a_float_reward_and_bool_flags(reward: Any) -> None:
    async def play() -> tuple[Any, ...]:
        env = AsyncFromSync(LooseTypes(reward))
        await env.reset(seed=0)
        result = await env.step(0)
        await env.close()
        return result

    _, value, terminated, truncated, _ = asyncio.run(play())
    assert type(value) is float and value == float(reward)
    assert type(terminated) is bool and terminated is True
    assert type(truncated) is bool and truncated is False


@pytest.mark.parametrize("reward", [None, "1", float("nan")])
def test_async_from_sync_names_a_malformed_step_result(reward: Any) -> None:
    async def play() -> None:
        env = as_async(LooseTypes(reward))
        await env.reset(seed=0)
        try:
            await env.step(0)
        finally:
            await env.close()

    with pytest.raises(InvalidStepResult, match=r"LooseTypes\.step\(\).*reward"):
        asyncio.run(play())


class Tracked(AsyncEnv):
    action_space = gym.spaces.Discrete(2)
    observation_space = gym.spaces.Discrete(2)

    def __init__(self) -> None:
        self.closed = 0
        self.closed_on: threading.Thread | None = None

    async def reset(self, *, seed=None, options=None):
        await super().reset(seed=seed, options=options)
        return 0, {}

    async def step(self, action):
        return 0, 0.0, True, False, {}

    async def close(self):
        self.closed += 1
        self.closed_on = threading.current_thread()


def _adapter_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("SyncFromAsync") and thread.is_alive()]


@pytest.mark.parametrize("used", [False, True])
def test_a_dropped_sync_adapter_closes_its_env_and_its_loop(used: bool) -> None:
    before = len(_adapter_threads())
    inner = Tracked()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        adapter = as_sync(inner)
        assert isinstance(adapter, SyncFromAsync)
        if used:
            adapter.reset(seed=1)
            adapter.step(0)
        loop = adapter._loop
        del adapter
        gc.collect()
        assert loop.is_closed()
        del loop
        gc.collect()
    assert inner.closed == 1
    assert inner.closed_on is not None and inner.closed_on.name.startswith("SyncFromAsync")
    assert len(_adapter_threads()) == before
    assert not [warning for warning in caught if issubclass(warning.category, ResourceWarning)]


def test_close_then_drop_closes_once_and_detach_leaves_the_env_open() -> None:
    inner = Tracked()
    adapter = SyncFromAsync(inner)
    adapter.close()
    del adapter
    gc.collect()
    assert inner.closed == 1

    other = Tracked()
    detached = as_async(SyncFromAsync(other))
    gc.collect()
    assert detached is other and other.closed == 0
