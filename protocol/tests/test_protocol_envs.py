"""Environments and adapters: value contract, serialised calls, cancellation, idempotent close."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import gymnasium as gym
import pytest
from rolloutgym_protocol import (
    AsyncEnv,
    AsyncFromSync,
    AsyncSingleTurnEnv,
    Score,
    SingleTurnEnv,
    SyncFromAsync,
    as_async,
    as_sync,
    check_async_env,
    check_env,
    spaces,
)
from rolloutgym_protocol.errors import EnvClosedError, InvalidStepResult


class Counter(gym.Env):
    action_space = gym.spaces.Discrete(3)
    observation_space = gym.spaces.Discrete(100)

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.active = 0
        self.peak = 0
        self.closed = 0
        self.count = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.count = 0
        return 0, {}

    def step(self, action):
        self.active += 1
        self.peak = max(self.peak, self.active)
        time.sleep(self.delay)
        self.active -= 1
        self.count += 1
        return self.count, float(action), self.count >= 3, False, {}

    def close(self):
        self.closed += 1


class AsyncCounter(AsyncEnv):
    action_space = gym.spaces.Discrete(3)
    observation_space = gym.spaces.Discrete(100)

    def __init__(self) -> None:
        self.count = 0
        self.closed = 0

    async def reset(self, *, seed=None, options=None):
        await super().reset(seed=seed, options=options)
        self.count = 0
        return 0, {}

    async def step(self, action):
        await asyncio.sleep(0)
        self.count += 1
        return self.count, 1.0, self.count >= 3, False, {}

    async def close(self):
        self.closed += 1


def test_round_trip_identity() -> None:
    sync_env = Counter()
    assert as_sync(as_async(sync_env)) is sync_env
    async_env = AsyncCounter()
    adapter = as_sync(async_env)
    assert isinstance(adapter, gym.Env)
    assert as_async(adapter) is async_env  # detached, inner not closed
    assert async_env.closed == 0
    with pytest.raises(TypeError, match="expected"):
        as_async(object())


def test_async_from_sync_serialises_calls_on_one_instance() -> None:
    env = Counter(delay=0.02)
    adapter = AsyncFromSync(env)

    async def main() -> None:
        await adapter.reset(seed=1)
        await asyncio.gather(*(adapter.step(1) for _ in range(4)))

    asyncio.run(main())
    assert env.peak == 1


def test_cancelled_call_does_not_overlap_the_next() -> None:
    env = Counter(delay=0.05)
    adapter = AsyncFromSync(env)

    async def main() -> None:
        await adapter.reset()
        task = asyncio.ensure_future(adapter.step(1))
        await asyncio.sleep(0.01)
        task.cancel()
        await adapter.step(1)

    asyncio.run(main())
    assert env.peak == 1


def test_close_is_idempotent_and_calls_after_close_fail() -> None:
    env = Counter()
    adapter = AsyncFromSync(env)
    asyncio.run(adapter.close())
    asyncio.run(adapter.close())
    assert env.closed == 1
    with pytest.raises(EnvClosedError):
        asyncio.run(adapter.step(1))
    inner = AsyncCounter()
    sync = SyncFromAsync(inner)
    sync.reset(seed=3)
    sync.close()
    sync.close()
    assert inner.closed == 1
    with pytest.raises(EnvClosedError):
        sync.step(1)


def test_sync_from_async_runs_on_one_loop_thread_and_passes_check_env() -> None:
    inner = AsyncCounter()
    sync = SyncFromAsync(inner)
    check_env(sync, action=1)
    sync.reset(seed=5)
    assert sync.np_random_seed == 5
    threads = [threading.Thread(target=lambda: sync.step(1)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sync.close()
    assert not any(t.name.startswith("SyncFromAsync") and t.is_alive() for t in threading.enumerate())


def test_async_env_seeding() -> None:
    env = AsyncCounter()
    asyncio.run(env.reset(seed=5))
    assert env.np_random_seed == 5
    asyncio.run(check_async_env(env, action=1))


class Question(SingleTurnEnv):
    action_space = spaces.text.text()
    observation_space = spaces.text.text()

    def __init__(self, value: Any = 1.0) -> None:
        self.value = value

    def initial_observation(self, *, options):
        return "q?", {"id": 1}

    def evaluate(self, action):
        return self.value


def test_single_turn_env_contract() -> None:
    env = Question(Score(0.5, feedback="half"))
    with pytest.raises(RuntimeError, match="reset"):
        env.step("a")
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step("a")
    assert (observation, reward, terminated, truncated) == ("a", 0.5, True, False)
    assert Score.from_info(info) == Score(0.5, feedback="half")
    with pytest.raises(RuntimeError):
        env.step("a")
    env = Question((True, {"x": 1}))
    env.reset()
    assert env.step("a")[1:] == (1.0, True, False, {"x": 1})


def test_single_turn_env_rejects_infinite_rewards() -> None:
    env = Question(float("inf"))
    env.reset()
    with pytest.raises(InvalidStepResult, match="non-finite"):
        env.step("a")


def test_async_single_turn_env() -> None:
    class AsyncQuestion(AsyncSingleTurnEnv):
        action_space = spaces.text.text()
        observation_space = spaces.text.text()

        async def initial_observation(self, *, options):
            return "q", {}

        async def evaluate(self, action):
            return Score(1.0 if action == "yes" else 0.0)

    env = AsyncQuestion()

    async def main() -> tuple:
        await env.reset(seed=1)
        return await env.step("yes")

    assert asyncio.run(main())[1] == 1.0


def test_check_env_accepts_numpy_bool_flags() -> None:
    class NumpyFlags(Counter):
        def step(self, action):
            observation, reward, terminated, truncated, info = super().step(action)
            import numpy as np

            return observation, reward, np.bool_(terminated), np.bool_(truncated), info

    check_env(NumpyFlags(), action=1)
