"""Environment checkers: ``check_env`` (sync) and ``check_async_env``.

They raise ``AssertionError`` with a message that names the failed check.
Flags may be ``bool`` or ``numpy.bool_``; rewards must be finite numbers.
"""

from __future__ import annotations

import copy
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


def _same(left: Any, right: Any) -> bool:
    """Equal, comparing numpy arrays by value inside lists, tuples and dicts."""
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        return isinstance(left, np.ndarray) and isinstance(right, np.ndarray) and np.array_equal(left, right)
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[key], right[key]) for key in left)
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return type(left) is type(right) and len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)


def _check_same_start(first: Any, again: Any, seed: int) -> None:
    assert _same(first, again), (
        f"reset(seed={seed}) twice gave different first observations: {first!r:.200} then {again!r:.200}; "
        "the same seed must give the same start (pass determinism=False for an env that cannot repeat it)"
    )


def check_env(
    env: gym.Env[Any, Any], *, seed: int = 0, action: Any = None, steps: int = 1, determinism: bool = True
) -> None:
    """Check a sync env: spaces, the reset/step value contract and (``determinism``) that
    ``reset(seed=seed)`` a second time gives the same first observation.

    Whole-episode determinism (the oracle's trajectory) is checked by the conformance kit
    (``rolloutgym_testing.EnvConformanceTests``).
    """
    assert isinstance(env, gym.Env), f"expected a gymnasium.Env, got {type(env).__name__}"
    _check_spaces(env)
    first = env.reset(seed=seed)
    _check_reset(env, first)
    start = copy.deepcopy(first[0])  # a snapshot: an env may append to the list it returned
    for _ in range(steps):
        chosen = env.action_space.sample() if action is None else action
        assert env.action_space.contains(chosen), f"action {chosen!r:.200} is not in action_space"
        if _check_step(env, env.step(chosen)):
            break
    if determinism:
        again = env.reset(seed=seed)
        _check_reset(env, again)
        _check_same_start(start, again[0], seed)


async def check_async_env(
    env: AsyncEnv[Any, Any], *, seed: int = 0, action: Any = None, steps: int = 1, determinism: bool = True
) -> None:
    """Check an async env: spaces, the reset/step value contract and (``determinism``) that
    ``reset(seed=seed)`` a second time gives the same first observation."""
    assert isinstance(env, AsyncEnv), f"expected a rolloutgym AsyncEnv, got {type(env).__name__}"
    _check_spaces(env)
    first = await env.reset(seed=seed)
    _check_reset(env, first)
    start = copy.deepcopy(first[0])  # a snapshot: an env may append to the list it returned
    for _ in range(steps):
        chosen = env.action_space.sample() if action is None else action
        assert env.action_space.contains(chosen), f"action {chosen!r:.200} is not in action_space"
        if _check_step(env, await env.step(chosen)):
            break
    if determinism:
        again = await env.reset(seed=seed)
        _check_reset(env, again)
        _check_same_start(start, again[0], seed)
