"""Group collection: several independent episodes of one item, with failure isolation.

A member whose ``make_env``, env or policy raises becomes a :class:`RolloutError`
record in ``TrajectoryGroup.errors`` (never a silent zero reward); its siblings finish.
``on_error="raise"`` restores fail-fast behaviour (the siblings are cancelled).
Every environment a group creates is closed, also when the group is cancelled.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import gymnasium as gym
from rolloutgym_protocol import AsyncEnv, RolloutError, Trajectory, TrajectoryGroup, as_async

from ._episode import _arollout_loop, _check_max_steps, _check_timeout, arollout, bind_policy, rollout

__all__ = ["arollout_group", "member_seeds", "rollout_group"]

OnError = Literal["record", "raise"]


def member_seeds(seed: int | Sequence[int | None] | None, num_rollouts: int) -> list[int | None]:
    """Seeds for each member: an int gives ``seed + i``; a sequence gives one per member."""
    if seed is None:
        return [None] * num_rollouts
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, a sequence of ints, or None")
    if isinstance(seed, int):
        return [seed + index for index in range(num_rollouts)]
    seeds = list(seed)
    if len(seeds) != num_rollouts:
        raise ValueError(f"got {len(seeds)} seeds for {num_rollouts} rollouts; pass one seed per rollout")
    return seeds


def _check_group_args(num_rollouts: int, on_error: str) -> None:
    if num_rollouts < 1:
        raise ValueError("num_rollouts must be at least 1")
    if on_error not in ("record", "raise"):
        raise ValueError(f"on_error must be 'record' or 'raise', got {on_error!r}")


def _item_id(item_id: Any) -> str:
    return "0" if item_id is None or item_id == "" else str(item_id)


def _error_record(exc: BaseException, member: int) -> RolloutError:
    where = getattr(exc, "_rolloutgym_where", None) or "engine"
    return RolloutError.from_exception(exc, where=where, member=member, step=getattr(exc, "_rolloutgym_step", None))


def _member_metadata(metadata: Mapping[str, Any] | None, member: int, seed: int | None) -> dict[str, Any]:
    data = dict(metadata or {})
    data["member"] = member
    if seed is not None:
        data["seed"] = seed
    return data


def _build_group(
    item: Any,
    item_id: Any,
    results: list[Trajectory | RolloutError],
    metadata: Mapping[str, Any] | None,
) -> TrajectoryGroup:
    trajectories = tuple(result for result in results if isinstance(result, Trajectory))
    errors = tuple(result for result in results if isinstance(result, RolloutError))
    return TrajectoryGroup(item, _item_id(item_id), trajectories, (), errors, dict(metadata or {}))


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
    seeds = member_seeds(seed, num_rollouts)
    results: list[Trajectory | RolloutError] = []
    for member, member_seed in enumerate(seeds):
        started = time.perf_counter()
        environment = None
        try:
            try:
                environment = make_env(item)
            except Exception as exc:
                exc._rolloutgym_where = "make_env"  # type: ignore[attr-defined]
                raise
            trajectory = rollout(
                environment,
                policy,
                seed=member_seed,
                options=options,
                max_steps=max_steps,
                timeout=timeout,
                metadata=_member_metadata(metadata, member, member_seed),
            )
            trajectory.metadata["elapsed_seconds"] = time.perf_counter() - started
            results.append(trajectory)
        except Exception as exc:
            if on_error == "raise":
                raise
            results.append(_error_record(exc, member))
        finally:
            if environment is not None:
                environment.close()
    return _build_group(item, item_id, results, metadata)


async def _close(environment: Any) -> None:
    result = environment.close()
    if inspect.isawaitable(result):
        await result


async def _run_member(
    item: Any,
    make_env: Callable[[Any], Any],
    policy: Any,
    member: int,
    member_seed: int | None,
    options: dict[str, Any] | None,
    max_steps: int | None,
    timeout: float | None,
    metadata: Mapping[str, Any] | None,
) -> Trajectory:
    started = time.perf_counter()
    try:
        environment = make_env(item)
        if inspect.isawaitable(environment):
            environment = await environment
    except Exception as exc:
        exc._rolloutgym_where = "make_env"  # type: ignore[attr-defined]
        raise
    if not isinstance(environment, AsyncEnv) and isinstance(environment, gym.Env):
        environment = as_async(environment)
    try:
        if timeout is None:
            # The common case skips arollout()'s argument checks (done once per group) and
            # one coroutine frame per member.
            trajectory = await _arollout_loop(
                environment,
                bind_policy(policy, environment),
                [],
                {},
                member_seed,
                options,
                max_steps,
                _member_metadata(metadata, member, member_seed),
                False,
            )
        else:
            trajectory = await arollout(
                environment,
                policy,
                seed=member_seed,
                options=options,
                max_steps=max_steps,
                timeout=timeout,
                metadata=_member_metadata(metadata, member, member_seed),
            )
    finally:
        # Runs also when the member is cancelled: the cancellation was delivered once,
        # so awaiting close() here completes and the env is not left open.
        closing = environment.close()
        if closing is not None and inspect.isawaitable(closing):
            await closing
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
    _check_max_steps(max_steps)
    _check_timeout(timeout)
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    seeds = member_seeds(seed, num_rollouts)
    results: list[Trajectory | RolloutError | None] = [None] * num_rollouts
    next_member = iter(range(num_rollouts))

    async def worker() -> None:
        for member in next_member:
            try:
                results[member] = await _run_member(
                    item, make_env, policy, member, seeds[member], options, max_steps, timeout, metadata
                )
            except Exception as exc:
                if on_error == "raise":
                    raise
                results[member] = _error_record(exc, member)

    workers = min(concurrency, num_rollouts)
    if workers == 1:
        await worker()
    else:
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(workers):
                    group.create_task(worker())
        except BaseExceptionGroup as failure:
            first = failure.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
    return _build_group(item, item_id, results, metadata)  # type: ignore[arg-type]
