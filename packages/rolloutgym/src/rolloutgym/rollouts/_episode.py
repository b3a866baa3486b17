"""Single-episode collection: :func:`rollout` (sync) and :func:`arollout` (async)."""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import AsyncEnv, PolicyOutput, Step, Trajectory, as_async, validate_step_result
from rolloutgym_protocol.errors import InvalidAction

__all__ = ["arollout", "bind_policy", "rollout"]

_PolicyOutput = PolicyOutput
_trusted = Step._trusted
_StepClass = Step
# Actions of these types are never PolicyOutputs or awaitables: skip those checks.
_PLAIN_ACTION_TYPES = frozenset({int, str, dict, list, float, bool, tuple})
_new = object.__new__
_set = object.__setattr__


def _tag(exc: BaseException, where: str, step: int) -> None:
    """Remember where an exception came from, for group failure records."""
    if getattr(exc, "_rolloutgym_where", None) is None:
        try:
            exc._rolloutgym_where = where  # type: ignore[attr-defined]
            exc._rolloutgym_step = step  # type: ignore[attr-defined]
        except AttributeError:  # exceptions with __slots__
            pass


def bind_policy(policy: Any, environment: Any) -> Any:
    """Return the callable to use for one episode (``policy.for_env(env)`` when defined)."""
    for_env = getattr(policy, "for_env", None)
    if for_env is not None and not isinstance(policy, type):
        return for_env(environment)
    return policy


def _check_max_steps(max_steps: int | None) -> None:
    if max_steps is not None and max_steps < 0:
        raise ValueError("max_steps must be non-negative")


def _check_timeout(timeout: float | None) -> None:
    if timeout is not None and (not math.isfinite(timeout) or timeout <= 0):
        raise ValueError("timeout must be a positive number of seconds")


def _validated(result: Any, environment: Any, index: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
    # Fast path for well-typed results; the full check names the env and step.
    if type(result) is tuple and len(result) == 5:
        observation, reward, terminated, truncated, info = result
        if (
            type(reward) is float
            and reward - reward == 0.0
            and type(terminated) is bool
            and type(truncated) is bool
            and type(info) is dict
        ):
            return result
    return validate_step_result(result, env=environment, step_index=index)


def _make_step(observation: Any, action: Any, output: Any, result: tuple[Any, float, bool, bool, dict[str, Any]]) -> Step:
    next_observation, reward, terminated, truncated, info = result
    if type(output) is _PolicyOutput:
        # Sampling fields live in their own Step fields (not duplicated in policy_info).
        return _trusted(
            observation,
            action,
            reward,
            next_observation,
            terminated,
            truncated,
            info,
            output.info,
            output.tokens,
            output.logprobs,
            output.stop_reason,
            output.prompt_tokens,
        )
    return _trusted(observation, action, reward, next_observation, terminated, truncated, info, {})


def _check_action(environment: Any, action: Any, index: int) -> None:
    space = getattr(environment, "action_space", None)
    if space is not None and not space.contains(action):
        raise InvalidAction(
            f"step {index}: action {action!r:.200} is not in {type(environment).__name__}.action_space {space!r}"
        )


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
    _check_max_steps(max_steps)
    _check_timeout(timeout)
    if isinstance(environment, AsyncEnv):
        raise TypeError(
            f"rollout() needs a sync gymnasium.Env, got async {type(environment).__name__}; "
            "use 'await arollout(env, policy)' or wrap it with as_sync(env)"
        )
    act = bind_policy(policy, environment)
    deadline = None if timeout is None else time.monotonic() + timeout
    index = 0
    try:
        observation, initial_info = environment.reset(seed=seed, options=options)
    except Exception as exc:
        _tag(exc, "env", 0)
        raise
    current = observation
    steps: list[Step] = []
    append = steps.append
    terminated = truncated = False
    stop_reason: str | None = None
    env_step = environment.step
    budget = -1 if max_steps is None else max_steps
    # Locals instead of globals/builtins in the hot loop (LOAD_FAST is cheaper).
    policy_output_type, step_type, new, set_attribute = _PolicyOutput, _StepClass, _new, _set
    type_of, has_attribute, float_type, bool_type, dict_type = type, hasattr, float, bool, dict
    plain_types = _PLAIN_ACTION_TYPES
    while True:
        if index == budget:
            truncated, stop_reason = True, "max_steps"
            break
        if deadline is not None and time.monotonic() >= deadline:
            truncated, stop_reason = True, "timeout"
            break
        try:
            output = act(current)
        except Exception as exc:
            _tag(exc, "policy", index)
            raise
        output_type = type_of(output)
        if output_type in plain_types:
            action = output
        elif output_type is policy_output_type:
            action = output.action
        elif has_attribute(output_type, "__await__") and inspect.isawaitable(output):
            close = getattr(output, "close", None)
            if close is not None:
                close()
            raise TypeError("synchronous policies must return an action; use arollout() for async policies")
        else:
            action = output
        if check_actions:
            _check_action(environment, action, index)
        try:
            result = env_step(action)
            # Fast path for well-typed results; validate_step_result names the env and step otherwise.
            try:
                next_observation, reward, step_terminated, step_truncated, info = result
            except (TypeError, ValueError):
                next_observation, reward, step_terminated, step_truncated, info = validate_step_result(
                    result, env=environment, step_index=index
                )
            if not (
                type_of(reward) is float_type
                and reward - reward == 0.0
                and type_of(step_terminated) is bool_type
                and type_of(step_truncated) is bool_type
                and type_of(info) is dict_type
            ):
                next_observation, reward, step_terminated, step_truncated, info = validate_step_result(
                    result, env=environment, step_index=index
                )
        except Exception as exc:
            _tag(exc, "env", index)
            raise
        if output_type is policy_output_type:
            append(_make_step(current, action, output, result))
        else:
            # Inlined Step._trusted: unset fields fall back to the class defaults (None, empty policy_info).
            step = new(step_type)
            set_attribute(
                step,
                "__dict__",
                {
                    "observation": current,
                    "action": action,
                    "reward": reward,
                    "next_observation": next_observation,
                    "terminated": step_terminated,
                    "truncated": step_truncated,
                    "info": info,
                },
            )
            append(step)
        current = next_observation
        index += 1
        if step_terminated or step_truncated:
            terminated, truncated = step_terminated, step_truncated
            stop_reason = "terminated" if terminated else "truncated"
            if output_type is policy_output_type and output.info.get("ended_by"):
                # The policy ended the episode (e.g. max_seq_len, max_turns): a truncation.
                terminated, truncated, stop_reason = False, True, str(output.info["ended_by"])
            break
    return Trajectory(
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
    _check_max_steps(max_steps)
    _check_timeout(timeout)
    if not isinstance(environment, AsyncEnv):
        if isinstance(environment, gym.Env):
            environment = as_async(environment)
        else:
            raise TypeError(
                f"arollout() needs a rolloutgym AsyncEnv or a gymnasium.Env, got {type(environment).__name__}"
            )
    act = bind_policy(policy, environment)
    steps: list[Step] = []
    state: dict[str, Any] = {}
    if timeout is None:
        return await _arollout_loop(environment, act, steps, state, seed, options, max_steps, metadata, check_actions)
    try:
        async with asyncio.timeout(timeout):
            return await _arollout_loop(environment, act, steps, state, seed, options, max_steps, metadata, check_actions)
    except TimeoutError:
        if "initial" not in state:
            raise TimeoutError(f"reset() of {type(environment).__name__} did not finish within {timeout} s") from None
        observation, initial_info = state["initial"]
        return Trajectory(observation, tuple(steps), initial_info, False, True, dict(metadata or {}), "timeout")


async def _arollout_loop(
    environment: AsyncEnv[Any, Any],
    act: Any,
    steps: list[Step],
    state: dict[str, Any],
    seed: int | None,
    options: dict[str, Any] | None,
    max_steps: int | None,
    metadata: Mapping[str, Any] | None,
    check_actions: bool,
) -> Trajectory:
    index = 0
    try:
        observation, initial_info = await environment.reset(seed=seed, options=options)
    except Exception as exc:
        _tag(exc, "env", 0)
        raise
    state["initial"] = (observation, initial_info)
    current = observation
    terminated = truncated = False
    stop_reason: str | None = None
    append = steps.append
    env_step = environment.step
    isawaitable = inspect.isawaitable
    while True:
        if max_steps is not None and index >= max_steps:
            truncated, stop_reason = True, "max_steps"
            break
        try:
            output = act(current)
            if isawaitable(output):
                output = await output
        except Exception as exc:
            _tag(exc, "policy", index)
            raise
        action = output.action if type(output) is _PolicyOutput else output
        if check_actions:
            _check_action(environment, action, index)
        try:
            result = _validated(await env_step(action), environment, index)
        except Exception as exc:
            _tag(exc, "env", index)
            raise
        append(_make_step(current, action, output, result))
        current = result[0]
        index += 1
        if result[2] or result[3]:
            terminated, truncated = result[2], result[3]
            stop_reason = "terminated" if terminated else "truncated"
            if type(output) is _PolicyOutput and output.info.get("ended_by"):
                # The policy ended the episode (e.g. max_seq_len, max_turns): a truncation.
                terminated, truncated, stop_reason = False, True, str(output.info["ended_by"])
            break
    return Trajectory(
        observation, tuple(steps), initial_info, terminated, truncated, dict(metadata or {}), stop_reason
    )
