"""check_env / check_async_env: the same seed twice must give the same first observation."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from rolloutgym_protocol import AsyncEnv, check_async_env, check_env, spaces

_CALLS = itertools.count()


class Seeded(gym.Env):
    """Its start depends on the seed only (through ``np_random``), as Gymnasium asks."""

    action_space = gym.spaces.Discrete(2)
    observation_space = gym.spaces.Box(0.0, 1.0, shape=(3,))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.np_random.random(3).astype(np.float32), {}

    def step(self, action):
        return self.np_random.random(3).astype(np.float32), 0.0, True, False, {}


class IgnoresSeed(Seeded):
    """A start that changes on every reset, whatever the seed (a counter standing in for a clock)."""

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.full(3, (next(_CALLS) % 10) / 10, dtype=np.float32), {}


class GrowingHistory(gym.Env):
    """Returns its own message list and appends to it on step: the checker must compare a snapshot."""

    action_space = spaces.text.text()
    observation_space = spaces.messages.chat(min_length=0)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.history = [{"role": "user", "content": "hello"}]
        return self.history, {}

    def step(self, action):
        self.history.append({"role": "assistant", "content": str(action)})
        return self.history, 1.0, True, False, {}


def test_a_seeded_env_passes():
    check_env(Seeded(), seed=3)
    check_env(GrowingHistory(), action="hi")


def test_an_env_whose_start_ignores_the_seed_fails_with_a_clear_message():
    with pytest.raises(AssertionError, match=r"reset\(seed=5\) twice gave different first observations"):
        check_env(IgnoresSeed(), seed=5)
    check_env(IgnoresSeed(), seed=5, determinism=False)


class AsyncCounter(AsyncEnv[str, str]):
    action_space = spaces.text.text()
    observation_space = spaces.text.text()

    def __init__(self, *, deterministic: bool) -> None:
        self.deterministic = deterministic
        self.resets = 0

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self.resets += 1
        return ("start" if self.deterministic else f"start {self.resets}"), {}

    async def step(self, action: str):
        return "end", 1.0, True, False, {}


def test_async_envs_are_checked_the_same_way():
    asyncio.run(check_async_env(AsyncCounter(deterministic=True), action="x"))
    with pytest.raises(AssertionError, match=r"'start 1' then 'start 2'"):
        asyncio.run(check_async_env(AsyncCounter(deterministic=False), action="x"))
    asyncio.run(check_async_env(AsyncCounter(deterministic=False), action="x", determinism=False))
