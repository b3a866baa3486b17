"""TRL's rollout fields: what :class:`~rolloutgym_trl.RolloutFunction` hands ``GRPOTrainer``, and
:func:`env_reward`, which reads them back.

* :func:`episode_tensors`: one trajectory as ``prompt_ids``, ``completion_ids``, ``env_mask``
  (0 on the env's tokens) and ``logprobs``;
* ``_fields``: a call's groups in order, each member's tensors with ``env_reward`` /
  ``env_passed`` / ``env_score`` (a failed member: one masked token, reward ``None``; a
  dropped group, and a member masked for its score's attribution: every token masked, the
  latter with reward ``None``);
* :func:`env_reward`: the env's own Score value as the reward, and the call's figures
  (the ``STATS_KEY`` field) logged through TRL's ``log_metric``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rolloutgym_protocol import Trajectory
from rolloutgym_protocol.errors import ConfigError

if TYPE_CHECKING:
    from .rollout import _Group

__all__ = ["STATS_KEY", "env_reward", "episode_tensors"]

STATS_KEY = "env_stats"


def episode_tensors(trajectory: Trajectory, *, pad_token_id: int) -> dict[str, Any]:
    """One trajectory as TRL's rollout fields: prompt ids, completion ids, env mask, logprobs.

    The first step's observation tokens are the prompt; everything after them is the
    completion, with the env's tokens masked out. A trajectory with no sampled token gets
    a single masked ``pad_token_id`` so that TRL's tensors stay rectangular.
    """
    prompt_ids: list[int] = []
    completion_ids: list[int] = []
    env_mask: list[int] = []
    logprobs: list[float] = []
    for index, step in enumerate(trajectory.steps):
        observed = list(step.observation_tokens or ())
        if index == 0:
            prompt_ids = observed
        else:
            completion_ids.extend(observed)
            env_mask.extend([0] * len(observed))
            logprobs.extend([0.0] * len(observed))
        sampled = list(step.policy_tokens or ())
        completion_ids.extend(sampled)
        env_mask.extend([1] * len(sampled))
        recorded = step.policy_logprobs
        if recorded is not None and len(recorded) == len(sampled):
            logprobs.extend(float(value) for value in recorded)
        else:
            logprobs.extend([0.0] * len(sampled))
    if not any(env_mask):
        completion_ids, env_mask, logprobs = [pad_token_id], [0], [0.0]
    if not prompt_ids:
        prompt_ids = [pad_token_id]
    return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "env_mask": env_mask, "logprobs": logprobs}


def _fields(groups: Sequence[_Group], pad: int) -> dict[str, Any]:
    """TRL's rollout fields for ``groups`` in order (a dropped group's tokens all masked)."""
    output: dict[str, Any] = {
        name: [] for name in ("prompt_ids", "completion_ids", "env_mask", "logprobs", "env_reward", "env_passed")
    }
    output["env_score"] = []
    for group in groups:
        for index, (trajectory, score) in enumerate(zip(group.members, group.scores, strict=True)):
            if trajectory is None:
                fields = {"prompt_ids": [pad], "completion_ids": [pad], "env_mask": [0], "logprobs": [0.0]}
                reward, passed, score_dict = None, None, None
            else:
                fields = episode_tensors(trajectory, pad_token_id=pad)
                reward, passed, score_dict = float(score.value), bool(score.value >= 1.0), score.to_dict()
            if index in group.masked:  # attributed to the user, the env or the grader: not the policy's
                reward, passed = None, None
            if group.dropped or index in group.masked:
                fields["env_mask"] = [0] * len(fields["env_mask"])
            for name, value in fields.items():
                output[name].append(value)
            output["env_reward"].append(reward)
            output["env_passed"].append(passed)
            output["env_score"].append(score_dict)
    return output


def _call_stats(value: Any) -> Mapping[str, Any]:
    """The rollout call's figures: TRL hands a non-list rollout field to reward functions once per row."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        value = next((item for item in value if isinstance(item, Mapping)), None)
    return value if isinstance(value, Mapping) else {}


def env_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
    """The reward function that goes with :class:`~rolloutgym_trl.RolloutFunction`: the env's own Score value.

    Also logs, through TRL's ``log_metric``, ``rolloutgym/pass_rate`` (share of episodes
    scoring 1) and the rollout call's signal figures (``rolloutgym/groups_with_spread``,
    ``rolloutgym/resampled_groups``, ``rolloutgym/dropped_groups``,
    ``rolloutgym/group_reward_std``, ``rolloutgym/advantage_abs``, ...).
    """
    rewards = kwargs.get("env_reward")
    if rewards is None:
        raise ConfigError(
            "env_reward reads the rewards that rolloutgym_trl.RolloutFunction returns; pass it as rollout_func"
        )
    passed = [value for value in kwargs.get("env_passed") or [] if value is not None]
    log_metric = kwargs.get("log_metric")
    if callable(log_metric):
        if passed:
            log_metric("rolloutgym/pass_rate", sum(passed) / len(passed))
        for name, value in _call_stats(kwargs.get(STATS_KEY)).items():
            if isinstance(value, (int, float)) and math.isfinite(value):
                log_metric(str(name), float(value))
    return [None if value is None or not math.isfinite(value) else float(value) for value in rewards]
