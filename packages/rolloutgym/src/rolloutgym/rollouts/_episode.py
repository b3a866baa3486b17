"""Single-episode collection: :func:`rollout` (sync) and :func:`arollout` (async).

Both run the same episode rules, written once in :mod:`._rules`: which value of the
policy's output is the action, how a step result is checked and normalised (float reward,
bool flags), how a step is recorded, and how the episode ends (stop reasons, budgets,
a policy that ends the episode). Only the two loops differ: one calls, the other awaits.
:func:`arun_loop` is also a whole group member (its env made and handed back by :mod:`._member`).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import AsyncEnv, Step, Trajectory, as_async
from rolloutgym_protocol._step import _StepBuilder
from rolloutgym_protocol.records import SHARED_EMPTY

from ._member import _ASYNC_ENV_TYPES, Release, error_record, made_env, member_metadata, release_env
from ._rules import (
    _PLAIN_ACTION_TYPES,
    EpisodeState,
    _check_action,
    _ending,
    _normalized,
    _PolicyOutput,
    _step,
    _sync_action,
    bind_policy,
    check_budgets,
)

__all__ = ["arollout", "arun_episode", "arun_loop", "rollout", "run_episode"]

_trusted_trajectory = Trajectory._trusted
perf_counter = time.perf_counter
_NO_STEPS: tuple[Step, ...] = ()


def rollout(
    environment: gym.Env[Any, Any],
    policy: Any,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    timeout: float | None = None,
    metadata: Mapping[str, Any] | None = None,
    check_actions: bool = False,
) -> Trajectory:
    """Collect one episode from a sync environment. Does not close ``environment``.

    Args:
        environment: a ``gymnasium.Env`` (use :func:`arollout` for an ``AsyncEnv``).
        policy: ``policy(observation) -> action | PolicyOutput`` (or an env-aware
            policy with ``for_env(env)``).
        seed: passed to ``reset``.
        options: passed to ``reset``.
        max_steps: collection budget; reaching it ends the episode as truncated
            (``stop_reason="max_steps"``) without recording an extra step.
        timeout: wall-clock budget in seconds, checked between steps
            (``stop_reason="timeout"``).
        metadata: stored on the trajectory.
        check_actions: raise :class:`InvalidAction` for actions outside the action space.

    Raises:
        InvalidStepResult: the env returned a NaN reward, a non-bool flag, ...
        TypeError: the policy returned an awaitable, or ``environment`` is async.
    """
    check_budgets(max_steps, timeout)
    if isinstance(environment, AsyncEnv):
        raise TypeError(
            f"rollout() needs a sync gymnasium.Env, got async {type(environment).__name__}; "
            "use 'await arollout(env, policy)' or wrap it with as_sync(env)"
        )
    return run_episode(
        environment,
        bind_policy(policy, environment),
        EpisodeState(),
        seed,
        options,
        max_steps,
        timeout,
        metadata,
        check_actions,
    )


def run_episode(
    environment: Any,
    act: Any,
    state: EpisodeState,
    seed: int | None,
    options: dict[str, Any] | None,
    max_steps: int | None,
    timeout: float | None,
    metadata: Mapping[str, Any] | None,
    check_actions: bool,
) -> Trajectory:
    """The sync episode loop (arguments already checked; ``act`` already bound)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        observation, initial_info = environment.reset(seed=seed, options=options)
    except Exception:
        state.failed("env", 0)
        raise
    if type(initial_info) is not dict:
        initial_info = dict(initial_info)  # a Mapping of the env's: the trajectory keeps a dict
    if not initial_info:
        initial_info = SHARED_EMPTY  # keep no empty dict of the env's per trajectory
    state.initial = (observation, initial_info)
    current = observation
    steps: list[Step] = state.steps
    append = steps.append
    terminated = truncated = False
    stop_reason: str | None = None
    env_step = environment.step
    index = 0
    budget = -1 if max_steps is None else max_steps
    plain_types, type_of, normalized, make_step = _PLAIN_ACTION_TYPES, type, _normalized, _step
    # _normalized's fast check and a plain action's Step are written out here (the same checks,
    # the same record as _rules._step): three frames fewer per step.
    build, step_type, empty, policy_output = _StepBuilder, Step, SHARED_EMPTY, _PolicyOutput
    while True:
        if index == budget:
            truncated, stop_reason = True, "max_steps"
            break
        if deadline is not None and time.monotonic() >= deadline:
            truncated, stop_reason = True, "timeout"
            break
        try:
            output = act(current)
            action = output if type_of(output) in plain_types else _sync_action(output)
        except Exception:
            state.failed("policy", index)
            raise
        if check_actions:
            _check_action(environment, action, index)
        try:
            result = env_step(action)
            if type_of(result) is not tuple or len(result) != 5:
                result = normalized(result, environment, index)
            following, reward, ended, cut, info = result
            if (
                type_of(reward) is not float
                or reward - reward != 0.0  # NaN or infinite
                or type_of(ended) is not bool
                or type_of(cut) is not bool
                or type_of(info) is not dict
            ):
                following, reward, ended, cut, info = result = normalized(result, environment, index)
        except Exception:
            state.failed("env", index, action)
            raise
        if type_of(output) is policy_output:
            append(make_step(current, action, output, result))
        else:
            step = build(current, action, reward, following, ended, cut, info or empty, empty, None, None, None, None)
            step.__class__ = step_type
            append(step)
        current = following
        index += 1
        if ended or cut:
            terminated, truncated, stop_reason = _ending(output, ended, cut)
            break
    return _trusted_trajectory(
        observation, tuple(steps), initial_info, terminated, truncated, dict(metadata or {}), stop_reason
    )


async def arollout(
    environment: AsyncEnv[Any, Any] | gym.Env[Any, Any],
    policy: Any,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    timeout: float | None = None,
    metadata: Mapping[str, Any] | None = None,
    check_actions: bool = False,
) -> Trajectory:
    """Collect one episode from an async (or adapted sync) environment.

    Same arguments as :func:`rollout`; the policy may be sync or async. A sync
    ``gymnasium.Env`` is adapted with :func:`as_async` (its calls run in a worker
    thread). ``timeout`` cancels an in-flight policy or env call and ends the
    episode as truncated with ``stop_reason="timeout"``. Does not close ``environment``.
    """
    check_budgets(max_steps, timeout)
    if not isinstance(environment, AsyncEnv):
        if isinstance(environment, gym.Env):
            environment = as_async(environment)
        else:
            raise TypeError(
                f"arollout() needs a rolloutgym AsyncEnv or a gymnasium.Env, got {type(environment).__name__}"
            )
    act = bind_policy(policy, environment)
    metadata = dict(metadata) if metadata else {}
    return await arun_episode(
        environment, act, EpisodeState(), seed, options, max_steps, timeout, metadata, check_actions
    )


async def arun_episode(
    environment: AsyncEnv[Any, Any],
    act: Any,
    state: EpisodeState,
    seed: int | None,
    options: dict[str, Any] | None,
    max_steps: int | None,
    timeout: float | None,
    metadata: dict[str, Any],
    check_actions: bool,
) -> Trajectory:
    """The async episode (arguments already checked; ``act`` already bound), with its timeout."""
    if timeout is None:
        return await arun_loop(environment, act, state, seed, options, max_steps, metadata, check_actions)
    try:
        async with asyncio.timeout(timeout):
            return await arun_loop(environment, act, state, seed, options, max_steps, metadata, check_actions)
    except TimeoutError:
        if state.initial is None:
            state.failed("env", 0)
            raise TimeoutError(f"reset() of {type(environment).__name__} did not finish within {timeout} s") from None
        observation, initial_info = state.initial
        return Trajectory(observation, tuple(state.steps), initial_info, False, True, metadata, "timeout")


async def arun_loop(
    environment: Any,
    act: Any,
    state: EpisodeState | None,
    seed: int | None,
    options: dict[str, Any] | None,
    max_steps: int | None,
    metadata: Mapping[str, Any] | None,
    check_actions: bool,
    member: int = -1,
    item: Any = None,
    make_env: Any = None,
    on_error: str = "raise",
    release: Release | None = None,
    passthrough: tuple[type[BaseException], ...] = (),
) -> Any:
    """The async episode loop, written once; also a whole group member when ``make_env`` is given.

    Plain episode (``make_env`` None): plays ``environment`` with the bound policy ``act``;
    the trajectory takes ``metadata`` as is (the caller's fresh dict). On any exception, also
    a cancellation (a timeout), ``state`` (when given) receives the reset result and the steps
    played, and on a failure where it failed; then the exception propagates.

    Group member (``make_env`` given; ``environment`` is ignored, ``act`` is the unbound
    policy): makes the env from ``item``, binds the policy, plays, hands the env back
    (``release`` or close; also when cancelled) and returns the trajectory, with ``member``
    and ``seed`` in its metadata and ``elapsed_seconds``; with ``on_error="record"`` a
    failure (other than ``passthrough`` types) is returned as a :class:`RolloutError`.
    One coroutine per member: the loop is not a second frame under the member's.
    """
    if make_env is not None:
        started = perf_counter()
        try:
            environment = make_env(item)
            if type(environment) not in _ASYNC_ENV_TYPES:  # else an AsyncEnv as is (the common case)
                environment = await made_env(environment)
        except Exception as exc:
            if on_error == "raise" or isinstance(exc, passthrough):
                raise
            return error_record(exc, member, where="make_env")
        metadata = member_metadata(metadata, member, seed)
    elif metadata is None:
        metadata = {}
    where: str | None = None
    index = 0
    action: Any = None
    steps: list[Step] | None = None
    observation: Any = None
    initial_info: Any = None
    healthy = False
    try:
        if make_env is not None:
            act = bind_policy(act, environment)
        where = "env"
        observation, initial_info = await environment.reset(seed=seed, options=options)
        if type(initial_info) is not dict:
            initial_info = dict(initial_info)  # a Mapping of the env's: the trajectory keeps a dict
        if not initial_info:
            initial_info = SHARED_EMPTY  # keep no empty dict of the env's per trajectory
        # Kept small on purpose: while the policy is awaited, 2,000 members in flight keep their
        # frames alive and the cyclic GC walks them, so no list until a second step, no bound
        # methods or local copies of globals held across the await.
        steps = _NO_STEPS
        current = observation
        terminated = truncated = False
        stop_reason: str | None = None
        budget = -1 if max_steps is None else max_steps
        while True:
            if index == budget:
                truncated, stop_reason = True, "max_steps"
                break
            where = "policy"
            output = act(current)
            if type(output) not in _PLAIN_ACTION_TYPES and inspect.isawaitable(output):
                output = await output
            action = output.action if type(output) is _PolicyOutput else output
            if check_actions:
                _check_action(environment, action, index)
            where = "env"
            result = _normalized(await environment.step(action), environment, index)
            step = _step(current, action, output, result)
            if index:
                if index == 1:
                    steps = [steps[0], step]
                else:
                    steps.append(step)  # type: ignore[union-attr]
            else:
                steps = (step,)
            current = result[0]
            index += 1
            if result[2] or result[3]:
                terminated, truncated, stop_reason = _ending(output, result[2], result[3])
                break
        trajectory = _trusted_trajectory(
            observation,
            steps if type(steps) is tuple else tuple(steps),
            initial_info,
            terminated,
            truncated,
            metadata,
            stop_reason,
        )
        healthy = True
    except BaseException as exc:
        error = isinstance(exc, Exception)  # else a cancellation (a timeout): not a failure
        record = error and make_env is not None and on_error != "raise" and not isinstance(exc, passthrough)
        if state is None and record:
            state = EpisodeState()
        if state is not None:
            if steps is not None:
                state.initial = (observation, initial_info)
                state.steps = list(steps)
            if error and where is not None:
                # After the reset, "env" means env.step failed on this step's action.
                state.failed(where, index, action if where == "env" and steps is not None else None)
        if not record:
            raise
        return error_record(exc, member, state)
    finally:
        # Runs also when the member is cancelled: the cancellation was delivered once,
        # so awaiting here completes and the env is not left open.
        if make_env is not None:
            await release_env(environment, release, healthy)
    if make_env is not None:
        trajectory.metadata["elapsed_seconds"] = perf_counter() - started
    return trajectory
