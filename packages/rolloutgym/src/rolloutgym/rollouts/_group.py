"""Group collection: several independent episodes of one item, with failure isolation.

A member whose ``make_env``, env or policy raises becomes a :class:`RolloutError`
record in ``TrajectoryGroup.errors`` (never a silent zero reward); its siblings finish.
``on_error="raise"`` restores fail-fast behaviour (the siblings are cancelled).
Every environment a group creates is closed, also when the group is cancelled.

:func:`run_member` (one member, start to finish) is what executors build on, with
:class:`GroupCollector` (``_collector.py``) and :func:`error_record` / :func:`aclose_env`
(``_member.py``); all are public in :mod:`rolloutgym.rollouts`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Literal

import gymnasium as gym
from rolloutgym_protocol import AsyncEnv, RolloutError, Trajectory, TrajectoryGroup

from ._collector import GroupCollector
from ._episode import arun_episode, arun_loop, run_episode
from ._member import Release, error_record, made_env, member_metadata, release_env
from ._rules import EpisodeState, bind_policy, check_budgets
from ._seeds import member_seeds, planned_seeds
from ._turns import LOOP_TURN_SECONDS, LoopTurns

__all__ = ["LOOP_TURN_SECONDS", "arollout_group", "rollout_group", "run_member"]

OnError = Literal["record", "raise"]
perf_counter = time.perf_counter


def _check_group_args(num_rollouts: int, on_error: str) -> None:
    if num_rollouts < 1:
        raise ValueError("num_rollouts must be at least 1")
    if on_error not in ("record", "raise"):
        raise ValueError(f"on_error must be 'record' or 'raise', got {on_error!r}")


def run_member(
    item: Any,
    make_env: Callable[[Any], Any],
    policy: Any,
    member: int,
    seed: int | None = None,
    *,
    options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    timeout: float | None = None,
    metadata: Mapping[str, Any] | None = None,
    on_error: OnError = "record",
    release: Release | None = None,
    passthrough: tuple[type[BaseException], ...] = (),
) -> Coroutine[Any, Any, Trajectory | RolloutError]:
    """Run one group member start to finish: make its env, roll out, hand the env back.

    ``await run_member(...)``: returns the member's coroutine (nothing runs before it is
    awaited, so a member cancelled before it starts opens no env).

    Args:
        make_env: ``make_env(item)`` returning an ``AsyncEnv``, a ``gymnasium.Env``
            (adapted) or an awaitable of either.
        policy: the group's policy (bound to the env with ``for_env`` when it has one).
        metadata: stored on the trajectory, with ``member`` and ``seed`` added.
        on_error: ``"record"`` returns a :class:`RolloutError` for any failure;
            ``"raise"`` re-raises it.
        release: ``await release(env, healthy)`` instead of closing the env (env pools);
            ``healthy`` is false when the episode failed or timed out.
        passthrough: exception types raised even with ``on_error="record"`` (an executor's
            own failures, e.g. a lost worker, which it retries).

    Arguments are not checked here (check once per group with :func:`check_budgets`).
    The env is released also when the member is cancelled.
    """
    if timeout is None:  # the common case: the member is one coroutine, the episode loop itself
        return arun_loop(
            None,
            policy,
            None,
            seed,
            options,
            max_steps,
            metadata,
            False,
            member,
            item,
            make_env,
            on_error,
            release,
            passthrough,
        )
    return _timed_member(
        item, make_env, policy, member, seed, options, max_steps, timeout, metadata, on_error, release, passthrough
    )


async def _timed_member(
    item: Any,
    make_env: Callable[[Any], Any],
    policy: Any,
    member: int,
    seed: int | None,
    options: dict[str, Any] | None,
    max_steps: int | None,
    timeout: float,
    metadata: Mapping[str, Any] | None,
    on_error: OnError,
    release: Release | None,
    passthrough: tuple[type[BaseException], ...],
) -> Trajectory | RolloutError:
    """A member with a time budget: the env is made and handed back outside the budget."""
    started = perf_counter()
    try:
        environment = await made_env(make_env(item))
    except Exception as exc:
        if on_error == "raise" or isinstance(exc, passthrough):
            raise
        return error_record(exc, member, where="make_env")
    healthy = False
    state = EpisodeState()
    try:
        act = bind_policy(policy, environment)
        trajectory = await arun_episode(
            environment, act, state, seed, options, max_steps, timeout, member_metadata(metadata, member, seed), False
        )
        healthy = trajectory.stop_reason != "timeout"  # a cut-off call may still run in the env
    except Exception as exc:
        if on_error == "raise" or isinstance(exc, passthrough):
            raise
        return error_record(exc, member, state)
    finally:
        await release_env(environment, release, healthy)
    trajectory.metadata["elapsed_seconds"] = perf_counter() - started
    return trajectory


def rollout_group(
    item: Any,
    make_env: Callable[[Any], gym.Env[Any, Any]],
    policy: Any,
    *,
    num_rollouts: int = 1,
    item_id: str | None = None,
    seed: int | Sequence[int | None] | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    timeout: float | None = None,
    metadata: Mapping[str, Any] | None = None,
    on_error: OnError = "record",
) -> TrajectoryGroup:
    """Run ``num_rollouts`` fresh environments for ``item`` one after another.

    Each member gets ``make_env(item)``, is rolled out with its seed (see
    :func:`member_seeds`) and ``options``, and its environment is closed.
    """
    _check_group_args(num_rollouts, on_error)
    check_budgets(max_steps, timeout)
    seeds = member_seeds(seed, num_rollouts)
    collector = GroupCollector()
    collector.open(0, item, item_id, num_rollouts, metadata)
    group = None
    for member, member_seed in enumerate(seeds):
        group = collector.add(
            0,
            member,
            _sync_member(item, make_env, policy, member, member_seed, options, max_steps, timeout, metadata, on_error),
        )
    assert group is not None
    return group


def _sync_member(
    item: Any,
    make_env: Callable[[Any], Any],
    policy: Any,
    member: int,
    seed: int | None,
    options: dict[str, Any] | None,
    max_steps: int | None,
    timeout: float | None,
    metadata: Mapping[str, Any] | None,
    on_error: OnError,
) -> Trajectory | RolloutError:
    started = time.perf_counter()
    state = EpisodeState()
    try:
        environment = make_env(item)
    except Exception as exc:
        if on_error == "raise":
            raise
        return error_record(exc, member, where="make_env")
    try:
        if isinstance(environment, AsyncEnv):
            raise TypeError(
                f"rollout_group() needs sync gymnasium.Envs, got async {type(environment).__name__}; "
                "use arollout_group()"
            )
        trajectory = run_episode(
            environment,
            bind_policy(policy, environment),
            state,
            seed,
            options,
            max_steps,
            timeout,
            member_metadata(metadata, member, seed),
            False,
        )
    except Exception as exc:
        if on_error == "raise":
            raise
        return error_record(exc, member, state)
    finally:
        environment.close()
    trajectory.metadata["elapsed_seconds"] = time.perf_counter() - started
    return trajectory


async def arollout_group(
    item: Any,
    make_env: Callable[[Any], Any],
    policy: Any,
    *,
    num_rollouts: int = 1,
    item_id: str | None = None,
    seed: int | Sequence[int | None] | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    timeout: float | None = None,
    concurrency: int = 1,
    metadata: Mapping[str, Any] | None = None,
    on_error: OnError = "record",
) -> TrajectoryGroup:
    """Run ``num_rollouts`` fresh environments for ``item`` with at most ``concurrency`` at once.

    ``make_env`` may return an ``AsyncEnv``, a ``gymnasium.Env`` (adapted) or an
    awaitable of either. Results keep member order. Cancelling the group cancels
    every member and closes every environment it opened.
    """
    _check_group_args(num_rollouts, on_error)
    check_budgets(max_steps, timeout)
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    seeds = planned_seeds(seed, num_rollouts) if seed is None or type(seed) is int else member_seeds(seed, num_rollouts)
    collector = GroupCollector()
    collector.open(0, item, item_id, num_rollouts, metadata)
    finished: list[TrajectoryGroup] = []
    next_member = iter(range(num_rollouts))

    async def worker() -> None:
        turns = LoopTurns()
        while True:
            if turns.due():
                await asyncio.sleep(0)  # members that never wait must still let the loop hear a cancel (Ctrl-C)
            member = next(next_member, None)  # taken after the turn: members start in member order
            if member is None:
                return
            outcome = await run_member(
                item,
                make_env,
                policy,
                member,
                seeds[member],
                options=options,
                max_steps=max_steps,
                timeout=timeout,
                metadata=metadata,
                on_error=on_error,
            )
            group = collector.add(0, member, outcome)
            if group is not None:
                finished.append(group)

    workers = min(concurrency, num_rollouts)
    if workers == 1:
        await worker()
    else:
        try:
            async with asyncio.TaskGroup() as tasks:
                for _ in range(workers):
                    tasks.create_task(worker())
        except BaseExceptionGroup as failure:
            first: BaseException = failure
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
    return finished[0]
