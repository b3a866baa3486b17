"""The episode rules, written once for both loops of :mod:`._episode`.

Which value of the policy's output is the action, how a step result is checked and
normalised (float reward, bool flags), how a step is recorded, how the episode ends (stop
reasons, a policy that ends the episode), the budgets' checks, and :class:`EpisodeState`
(where an episode is, for its failure record).
"""

from __future__ import annotations

import inspect
import math
from typing import Any

from rolloutgym_protocol import PolicyOutput, Step, validate_step_result
from rolloutgym_protocol.errors import InvalidAction
from rolloutgym_protocol.records import SHARED_EMPTY

__all__ = ["EpisodeState", "bind_policy", "check_budgets"]

_PolicyOutput = PolicyOutput
# Actions of these types are never PolicyOutputs or awaitables: skip those checks.
_PLAIN_ACTION_TYPES = frozenset({int, str, dict, list, float, bool, tuple})
_trusted = Step._trusted


class EpisodeState:
    """Where an episode is: the reset result once known, and where it failed.

    The engine hands one to the episode loop so that a failure can be recorded with its
    place (``where``: ``"env"``, ``"policy"``), step and, when ``env.step`` failed, the
    action it was given, without tagging the exception.
    """

    __slots__ = ("action", "initial", "step", "steps", "where")

    def __init__(self) -> None:
        self.initial: tuple[Any, dict[str, Any]] | None = None
        self.steps: list[Step] = []  # the steps played so far (kept on an error record)
        self.where: str | None = None
        self.step: int | None = None
        self.action: Any = None  # the action env.step failed on (kept on an error record)

    def failed(self, where: str, step: int, action: Any = None) -> None:
        if self.where is None:
            self.where, self.step, self.action = where, step, action


def bind_policy(policy: Any, environment: Any) -> Any:
    """Return the callable to use for one episode (``policy.for_env(env)`` when defined)."""
    for_env = getattr(policy, "for_env", None)
    if for_env is not None and not isinstance(policy, type):
        return for_env(environment)
    return policy


def check_budgets(max_steps: int | None, timeout: float | None) -> None:
    """Reject a negative ``max_steps`` or a non-positive ``timeout``."""
    if max_steps is not None and max_steps < 0:
        raise ValueError("max_steps must be non-negative")
    if timeout is not None and (not math.isfinite(timeout) or timeout <= 0):
        raise ValueError("timeout must be a positive number of seconds")


def _normalized(result: Any, environment: Any, index: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
    """The step result with a float reward and bool flags (fast path for well-typed results)."""
    if type(result) is tuple and len(result) == 5:
        _, reward, terminated, truncated, info = result
        if (
            type(reward) is float
            and reward - reward == 0.0
            and type(terminated) is bool
            and type(truncated) is bool
            and type(info) is dict
        ):
            return result
    return validate_step_result(result, env=environment, step_index=index)


def _policy_info(output: Any) -> dict[str, Any]:
    """``output.info`` plus the sampling fields (rolloutlib 0.2.0 kept them there; so do we)."""
    info = output.info
    if output.tokens is None and output.logprobs is None and output.stop_reason is None:
        return info or SHARED_EMPTY
    info = dict(info)
    if output.tokens is not None:
        info.setdefault("tokens", output.tokens)
    if output.logprobs is not None:
        info.setdefault("logprobs", output.logprobs)
    if output.stop_reason is not None:
        info.setdefault("stop_reason", output.stop_reason)
    return info


def _step(observation: Any, action: Any, output: Any, result: tuple[Any, float, bool, bool, dict[str, Any]]) -> Step:
    """A :class:`Step` from normalised values, built without ``__post_init__`` (the hot path).

    An empty env ``info`` (a fresh ``{}`` per step in most envs) is not kept: the step
    holds the shared read-only :data:`SHARED_EMPTY` instead.
    """
    if type(output) is _PolicyOutput:
        # Sampling fields live in their own Step fields; policy_info also carries them, as
        # rolloutlib's did (run files store them once: Step.to_dict).
        return _trusted(
            observation,
            action,
            result[1],
            result[0],
            result[2],
            result[3],
            result[4] or SHARED_EMPTY,
            _policy_info(output),
            output.tokens,
            output.logprobs,
            output.stop_reason,
            output.prompt_tokens,
        )
    return _trusted(
        observation, action, result[1], result[0], result[2], result[3], result[4] or SHARED_EMPTY, SHARED_EMPTY
    )


def _ending(output: Any, terminated: bool, truncated: bool) -> tuple[bool, bool, str]:
    """``(terminated, truncated, stop_reason)`` of an episode whose last step ended it."""
    if type(output) is _PolicyOutput and output.info.get("ended_by"):
        # The policy ended the episode (e.g. max_seq_len, max_turns): a truncation.
        return False, True, str(output.info["ended_by"])
    return terminated, truncated, "terminated" if terminated else "truncated"


def _check_action(environment: Any, action: Any, index: int) -> None:
    space = getattr(environment, "action_space", None)
    if space is not None and not space.contains(action):
        raise InvalidAction(
            f"step {index}: action {action!r:.200} is not in {type(environment).__name__}.action_space {space!r}"
        )


def _sync_action(output: Any) -> Any:
    """The action of a sync policy's output (plain types are caught before this call)."""
    if type(output) is _PolicyOutput:
        return output.action
    if hasattr(type(output), "__await__") and inspect.isawaitable(output):
        close = getattr(output, "close", None)
        if close is not None:
            close()
        raise TypeError("synchronous policies must return an action; use arollout() for async policies")
    return output
