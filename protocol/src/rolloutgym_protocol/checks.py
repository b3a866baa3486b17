"""Environment checkers: ``check_env`` (sync) and ``check_async_env``.

They raise ``AssertionError`` with a message that names the failed check.
Flags may be ``bool`` or ``numpy.bool_``; rewards must be finite numbers.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from .envs import AsyncEnv

__all__ = ["check_async_env", "check_env"]


def _check_spaces(env: Any) -> None:
    for attribute in ("action_space", "observation_space"):
        space = getattr(env, attribute, None)
        assert isinstance(space, gym.Space), (
            f"{type(env).__name__}.{attribute} must be a gymnasium Space, got {space!r}"
        )


def _check_reset(env: Any, result: Any) -> None:
    assert isinstance(result, tuple) and len(result) == 2, "reset() must return (observation, info)"
    observation, info = result
    assert isinstance(info, dict), f"reset() info must be a dict, got {type(info).__name__}"
    assert env.observation_space.contains(observation), (
        f"reset() observation is not in observation_space {env.observation_space!r}: {observation!r:.200}"
    )


def _check_step(env: Any, result: Any) -> bool:
    assert isinstance(result, tuple) and len(result) == 5, (
        "step() must return (observation, reward, terminated, truncated, info)"
    )
    observation, reward, terminated, truncated, info = result
    assert env.observation_space.contains(observation), (
        f"step() observation is not in observation_space {env.observation_space!r}: {observation!r:.200}"
    )
    assert isinstance(reward, (int, float, np.integer, np.floating)) and not isinstance(reward, (bool, np.bool_)), (
        f"step() reward must be a number, got {type(reward).__name__}"
    )
    assert math.isfinite(float(reward)), f"step() reward must be finite, got {reward!r}"
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        assert isinstance(flag, (bool, np.bool_)), f"step() {name} must be a bool, got {type(flag).__name__}"
    assert isinstance(info, dict), f"step() info must be a dict, got {type(info).__name__}"
    return bool(terminated or truncated)


def check_env(env: gym.Env[Any, Any], *, seed: int = 0, action: Any = None, steps: int = 1) -> None:
    """Check a sync env: spaces and the reset/step value contract.

    Seeding determinism is not checked here; the conformance kit (``rolloutgym_testing``) does.
    """
    assert isinstance(env, gym.Env), f"expected a gymnasium.Env, got {type(env).__name__}"
    _check_spaces(env)
    first = env.reset(seed=seed)
    _check_reset(env, first)
    for _ in range(steps):
        chosen = env.action_space.sample() if action is None else action
        assert env.action_space.contains(chosen), f"action {chosen!r:.200} is not in action_space"
        if _check_step(env, env.step(chosen)):
            break


async def check_async_env(env: AsyncEnv[Any, Any], *, seed: int = 0, action: Any = None, steps: int = 1) -> None:
    """Check an async env: spaces, reset/step value contract."""
    assert isinstance(env, AsyncEnv), f"expected a rolloutgym AsyncEnv, got {type(env).__name__}"
    _check_spaces(env)
    _check_reset(env, await env.reset(seed=seed))
    for _ in range(steps):
        chosen = env.action_space.sample() if action is None else action
        assert env.action_space.contains(chosen), f"action {chosen!r:.200} is not in action_space"
        if _check_step(env, await env.step(chosen)):
            break
