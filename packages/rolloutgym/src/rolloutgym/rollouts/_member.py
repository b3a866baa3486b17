"""A group member's env and failure record, around the episode loop of :mod:`._episode`.

The env ``make_env(item)`` returned, awaited and adapted (:func:`made_env`, :func:`adapt_env`),
handed back or closed (:func:`release_env`); the member's trajectory metadata
(:func:`member_metadata`); and its failure record (:func:`error_record`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import AsyncEnv, RolloutError, Trajectory, as_async

from ._rules import EpisodeState

__all__ = ["Release", "aclose_env", "adapt_env", "error_record", "made_env", "member_metadata", "release_env"]

Release = Callable[[Any, bool], Awaitable[None]]


def error_record(
    exc: BaseException, member: int, state: EpisodeState | None = None, *, where: str | None = None
) -> RolloutError:
    """The failure record of a member: where it failed (``state`` or ``where``; default ``"engine"``).

    When the episode had started, the record keeps it as far as it got (``partial``: the
    reset observation and the steps played), so a failure late in an episode loses no turns;
    when ``env.step`` failed, the record keeps the action it was given (``action``).
    """
    step = action = None
    if where is None and state is not None and state.where is not None:
        where, step, action = state.where, state.step, state.action
    partial = None
    if state is not None and state.initial is not None:
        observation, initial_info = state.initial
        partial = Trajectory(
            observation, tuple(state.steps), initial_info, metadata={"member": member}, stop_reason="error"
        )
    return RolloutError.from_exception(
        exc, where=where or "engine", member=member, step=step, partial=partial, action=action
    )


def member_metadata(metadata: Mapping[str, Any] | None, member: int, seed: int | None) -> dict[str, Any]:
    """A member's trajectory metadata: the group's, plus ``member`` and ``seed`` (when set)."""
    if seed is None:
        return {**metadata, "member": member} if metadata else {"member": member}
    return {**metadata, "member": member, "seed": seed} if metadata else {"member": member, "seed": seed}


def adapt_env(environment: Any) -> Any:
    """An ``AsyncEnv`` as is, a ``gymnasium.Env`` adapted with :func:`as_async` (others unchanged)."""
    if type(environment) not in _ASYNC_ENV_TYPES:
        if isinstance(environment, AsyncEnv):
            if len(_ASYNC_ENV_TYPES) < 1024:
                _ASYNC_ENV_TYPES.add(type(environment))
        elif isinstance(environment, gym.Env):
            return as_async(environment)
        elif not (hasattr(environment, "reset") and hasattr(environment, "step")):
            raise TypeError(
                f"make_env returned {type(environment).__name__}, not an environment: return a rolloutgym "
                "AsyncEnv or a gymnasium.Env (or an awaitable of one)"
            )
    return environment


_ASYNC_ENV_TYPES: set[type] = set()  # AsyncEnv subclasses seen (an ABC isinstance check costs more)
_NOOP_CLOSE = AsyncEnv.close


async def made_env(made: Any) -> Any:
    """What ``make_env(item)`` returned, awaited when it is awaitable, then adapted (:func:`adapt_env`)."""
    if inspect.isawaitable(made):
        made = await made
    return adapt_env(made)


async def release_env(environment: Any, release: Release | None, healthy: bool) -> None:
    """Hand a member's env back: ``await release(env, healthy)``, else close it (sync or async)."""
    if release is not None:
        await release(environment, healthy)
    elif getattr(type(environment), "close", _NOOP_CLOSE) is not _NOOP_CLOSE:  # the base no-op: skip it
        closing = environment.close()
        if closing is not None and inspect.isawaitable(closing):
            await closing


async def aclose_env(environment: Any) -> None:
    """Close an env whose ``close()`` may be sync or async."""
    result = environment.close()
    if result is not None and inspect.isawaitable(result):
        await result
