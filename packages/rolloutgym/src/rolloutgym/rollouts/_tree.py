"""Branching rollouts: :func:`rollout_tree` / :func:`arollout_tree` play one episode (the trunk), then
``num_branches`` continuations from chosen steps of it.

The env must fork (``rolloutgym_protocol.ForkableEnv``: ``EnvSpec.forkable``). Before each
chosen step the trunk's env is snapshotted (data, no env held open) and its policy episode
copied (an episode object with ``fork(env)``, such as the LLM policies'; an env-driven policy
such as ``oracle`` is bound afresh: its state is the env's). Branches are spawned from those
snapshots once the trunk ends and run concurrently, each in its own env.

The result is a :class:`TrajectoryGroup`: member 0 is the trunk, the others are branches.
Every branch is a whole trajectory whose first ``at`` steps are the trunk's own ``Step``
objects (the shared prefix; exporters read it as context, see ``trajectory_tokens``), and its
metadata says where it hangs: ``{"branch": {"id": "3.1", "parent": 0, "at": 3}}`` (parent
member 0, diverging at step 3: the parent's steps 0-2 are its prefix). The group's metadata
has ``{"tree": {"branch_at": [...], "num_branches": n}}``. Old readers see ordinary members.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import AsyncEnv, RolloutError, Step, Trajectory, TrajectoryGroup, as_async, can_fork
from rolloutgym_protocol.errors import NotForkable
from rolloutgym_protocol.forking import asnapshot, aspawn

from ._member import aclose_env
from ._rules import _PLAIN_ACTION_TYPES, _check_action, _ending, _normalized, _PolicyOutput, _step, bind_policy

__all__ = ["BRANCH_MODES", "arollout_tree", "branch_steps", "rollout_tree"]

BRANCH_MODES = ("every", "before-error")


def branch_steps(branch_at: str | int | Sequence[int]) -> str | tuple[int, ...]:
    """Check ``branch_at``: ``"every"``, ``"before-error"``, a step index or a list of them."""
    if isinstance(branch_at, str):
        if branch_at in BRANCH_MODES:
            return branch_at
        try:
            return branch_steps([int(part) for part in branch_at.split(",")])
        except ValueError:
            pass
        raise ValueError(
            f"branch_at {branch_at!r}: give 'every', 'before-error', a step index or comma-separated indices (e.g. 2,5)"
        )
    steps = (branch_at,) if isinstance(branch_at, int) else tuple(branch_at)
    if not steps or any(isinstance(step, bool) or not isinstance(step, int) or step < 0 for step in steps):
        raise ValueError(f"branch_at {branch_at!r}: step indices are integers from 0 (0 = before the first action)")
    return tuple(sorted(set(steps)))


def _failed_step(result: tuple[Any, ...], invalid_before: int) -> bool:
    """Whether a step reported an error: more invalid actions, or a tool message that starts with 'error'."""
    info = result[4]
    invalid = info.get("invalid_actions") if isinstance(info, dict) else None
    if isinstance(invalid, int) and invalid > invalid_before:
        return True
    messages = result[0] if isinstance(result[0], list) else [result[0]]
    return any(
        isinstance(message, dict)
        and message.get("role") == "tool"
        and str(message.get("content", "")).lstrip().lower().startswith("error")
        for message in messages
    )


class _Play:
    """One stretch of an episode: steps from ``index`` until it ends or the budget runs out."""

    def __init__(self, environment: Any, act: Any, check_actions: bool) -> None:
        self.environment, self.act, self.check_actions = environment, act, check_actions
        self.steps: list[Step] = []
        self.terminated = self.truncated = False
        self.stop_reason: str | None = None

    async def one(self, current: Any, index: int) -> tuple[Any, tuple[Any, ...]]:
        output = self.act(current)
        if type(output) not in _PLAIN_ACTION_TYPES and inspect.isawaitable(output):
            output = await output
        action = output.action if type(output) is _PolicyOutput else output
        if self.check_actions:
            _check_action(self.environment, action, index)
        result = _normalized(await self.environment.step(action), self.environment, index)
        self.steps.append(_step(current, action, output, result))
        if result[2] or result[3]:
            self.terminated, self.truncated, self.stop_reason = _ending(output, result[2], result[3])
        return result[0], result


def _copy_episode(act: Any) -> Any:
    """A frozen copy of the trunk's policy episode at a branch step (None: bind afresh per branch)."""
    fork = getattr(act, "fork", None)
    return fork(None) if callable(fork) else None


def _branch_act(frozen: Any, policy: Any, environment: Any) -> Any:
    return frozen.fork(environment) if frozen is not None else bind_policy(policy, environment)


async def _trunk(
    environment: Any, act: Any, mode: str | tuple[int, ...], budget: int, play: _Play, seed: Any, options: Any
) -> tuple[Any, dict[str, Any], dict[int, tuple[Any, Any, Any]]]:
    """Play the trunk; return its reset values and ``{step: (env state, policy copy, observation)}``."""
    observation, initial_info = await environment.reset(seed=seed, options=options)
    points: dict[int, tuple[Any, Any, Any]] = {}
    current, index, invalid, failed = observation, 0, 0, False
    while not (play.terminated or play.truncated):
        if index == budget:
            play.truncated, play.stop_reason = True, "max_steps"
            break
        if mode == "every" or (mode == "before-error" and not failed) or (isinstance(mode, tuple) and index in mode):
            points[index] = (await asnapshot(environment), _copy_episode(act), current)
        current, result = await play.one(current, index)
        if mode == "before-error" and not failed:
            failed = _failed_step(result, invalid)
            points = {index: points[index]} if failed else {}
        invalid = result[4].get("invalid_actions", invalid) if isinstance(result[4], dict) else invalid
        index += 1
    if mode == "before-error" and not failed:
        points = {}
    return observation, dict(initial_info), points


async def _branch(
    parent: Any, state: Any, frozen: Any, policy: Any, trunk: Trajectory, at: int, label: str, options: dict[str, Any]
) -> Trajectory:
    started = time.perf_counter()
    (environment,) = await aspawn(parent, state, 1)
    try:
        play = _Play(environment, _branch_act(frozen, policy, environment), options["check_actions"])
        current, index = options["current"], at
        while not (play.terminated or play.truncated):
            if index == options["budget"]:
                play.truncated, play.stop_reason = True, "max_steps"
                break
            current, _ = await play.one(current, index)
            index += 1
    finally:
        await aclose_env(environment)
    metadata = {**options["metadata"], "branch": {"id": label, "parent": 0, "at": at}}
    metadata["elapsed_seconds"] = time.perf_counter() - started  # the branch's own time, not its prefix's
    return Trajectory(
        trunk.initial_observation,
        (*trunk.steps[:at], *play.steps),
        trunk.initial_info,
        play.terminated,
        play.truncated,
        metadata,
        play.stop_reason,
    )


async def arollout_tree(
    environment: AsyncEnv[Any, Any] | gym.Env[Any, Any],
    policy: Any,
    *,
    branch_at: str | int | Sequence[int] = "every",
    num_branches: int = 2,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    max_steps: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    check_actions: bool = False,
    item: Any = None,
    item_id: str = "",
) -> TrajectoryGroup:
    """Play a trunk episode, then ``num_branches`` continuations from each chosen step (see the module docstring).

    Args:
        environment: a forkable env (sync envs are adapted); not closed here.
        policy: as for :func:`arollout`; branches continue its episode (``fork``) or bind it afresh.
        branch_at: ``"every"`` step, ``"before-error"`` (the step whose action the env reported as an
            error: its branches retry it), or step indices (0 = before the first action).
        num_branches: continuations per chosen step.
        max_steps: step budget of every trajectory, counted from the reset (prefix included).

    Raises:
        NotForkable: the env cannot fork (the message says why).
    """
    if isinstance(num_branches, bool) or not isinstance(num_branches, int) or num_branches < 1:
        raise ValueError(f"num_branches must be a positive integer, got {num_branches!r}")
    mode = branch_steps(branch_at)
    if not isinstance(environment, AsyncEnv):
        environment = as_async(environment)
    if not can_fork(environment):
        await asnapshot(environment)  # raises NotForkable with the env's own reason
        raise NotForkable(f"{type(environment).__name__} cannot fork")  # pragma: no cover
    metadata = dict(metadata or {})
    started = time.perf_counter()
    play = _Play(environment, bind_policy(policy, environment), check_actions)
    budget = -1 if max_steps is None else max_steps
    observation, initial_info, points = await _trunk(environment, play.act, mode, budget, play, seed, options)
    trunk_metadata = {**metadata, "branch": {"id": "trunk", "parent": None, "at": None}}
    trunk_metadata["elapsed_seconds"] = time.perf_counter() - started
    trunk = Trajectory(
        observation, tuple(play.steps), initial_info, play.terminated, play.truncated, trunk_metadata, play.stop_reason
    )
    jobs, labels = [], []
    for at, (state, frozen, current) in sorted(points.items()):
        settings = {"check_actions": check_actions, "current": current, "budget": budget, "metadata": metadata}
        for number in range(num_branches):
            labels.append(f"{at}.{number}")
            jobs.append(_branch(environment, state, frozen, policy, trunk, at, labels[-1], settings))
    outcomes = await asyncio.gather(*jobs, return_exceptions=True)
    branches, errors = [trunk], []
    for member, (label, outcome) in enumerate(zip(labels, outcomes, strict=True), start=1):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            errors.append(RolloutError.from_exception(outcome, where=f"branch {label}", member=member))
        else:
            branches.append(outcome)
    tree = {
        "branch_at": sorted(points),
        "num_branches": num_branches,
        "mode": mode if isinstance(mode, str) else "steps",
    }
    return TrajectoryGroup(item, item_id, tuple(branches), errors=tuple(errors), metadata={"tree": tree})


def rollout_tree(environment: Any, policy: Any, **options: Any) -> TrajectoryGroup:
    """The blocking :func:`arollout_tree` (same arguments); call it outside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arollout_tree(environment, policy, **options))
    raise RuntimeError("rollout_tree() was called inside a running event loop; use 'await arollout_tree(...)'")
