"""Token sequences of LLM trajectories, the provenance check, and rollout metrics.

The metric names follow the multi-turn rollout seed: ``total_turns``,
``avg_turns_per_sample``, ``natural_termination_rate``, ``truncation_rate``,
``max_turns_reached_rate``, token counts per sample, reward statistics, plus the counters
of this loop (``invalid_action_count``, ``malformed_thinking_count``,
``retokenization_mismatches``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol import Trajectory, TrajectoryGroup

from ._episode import token_digest

__all__ = ["TokenSequence", "check_provenance", "metrics", "trajectory_tokens"]


@dataclass(frozen=True, slots=True)
class TokenSequence:
    """One trajectory as a training sequence.

    Attributes:
        input_ids: observation tokens and sampled tokens, in order.
        loss_mask: 1 for sampled tokens, 0 for prompt and observation tokens.
        logprobs: the sampler's logprob for sampled tokens, 0.0 elsewhere (``None`` when
            the policy recorded no logprobs).
        turn_spans: ``(start, end)`` of each turn's sampled tokens in ``input_ids``.
    """

    input_ids: tuple[int, ...]
    loss_mask: tuple[int, ...]
    logprobs: tuple[float, ...] | None
    turn_spans: tuple[tuple[int, int], ...]

    def __len__(self) -> int:
        return len(self.input_ids)


def _shared_prefix(trajectory: Trajectory) -> int:
    """How many first steps a branch shares with its parent (0 for other trajectories)."""
    branch = trajectory.metadata.get("branch") if isinstance(trajectory.metadata, dict) else None
    at = branch.get("at") if isinstance(branch, dict) and branch.get("parent") is not None else None
    return at if isinstance(at, int) and not isinstance(at, bool) and at > 0 else 0


def trajectory_tokens(trajectory: Trajectory) -> TokenSequence | None:
    """The token sequence of ``trajectory``, or ``None`` when its policy recorded no tokens.

    A branch of a rollout tree (``metadata["branch"]["at"] = k``) keeps its prefix's sampled
    tokens as context (loss mask 0): they are trained once, in the trunk's sequence.
    """
    if not any(step.policy_tokens is not None or step.observation_tokens is not None for step in trajectory.steps):
        return None
    input_ids: list[int] = []
    loss_mask: list[int] = []
    logprobs: list[float] | None = []
    spans = []
    prefix = _shared_prefix(trajectory)
    for number, step in enumerate(trajectory.steps):
        observed = step.observation_tokens or ()
        input_ids.extend(observed)
        loss_mask.extend([0] * len(observed))
        if logprobs is not None:
            logprobs.extend([0.0] * len(observed))
        sampled = step.policy_tokens or ()
        start = len(input_ids)
        input_ids.extend(sampled)
        loss_mask.extend([0 if number < prefix else 1] * len(sampled))
        if sampled and number >= prefix:
            spans.append((start, len(input_ids)))
        if logprobs is not None:
            if step.policy_logprobs is not None and len(step.policy_logprobs) == len(sampled):
                logprobs.extend(step.policy_logprobs)
            elif sampled:
                logprobs = None
    return TokenSequence(
        tuple(input_ids), tuple(loss_mask), None if logprobs is None else tuple(logprobs), tuple(spans)
    )


def check_provenance(trajectory: Trajectory) -> int:
    """Count the turns whose recorded tokens differ from what the model saw or sampled.

    A turn is a mismatch when the policy flagged one at run time
    (``policy_info["retokenization_mismatch"]``), when the digest of the prompt it sent
    to the sampler differs from the digest of the recorded token sequence up to that
    point, or when its logprobs do not line up one to one with its tokens. Works on
    trajectories read back from a run file.
    """
    mismatches = 0
    running: list[int] = []
    for step in trajectory.steps:
        running.extend(step.observation_tokens or ())
        info = step.policy_info
        bad = bool(info.get("retokenization_mismatch"))
        digest = info.get("prompt_digest")
        if isinstance(digest, str) and step.policy_tokens is not None and digest != token_digest(running):
            bad = True
        if (
            step.policy_tokens is not None
            and step.policy_logprobs is not None
            and len(step.policy_tokens) != len(step.policy_logprobs)
        ):
            bad = True
        mismatches += bad
        running.extend(step.policy_tokens or ())
    return mismatches


def _trajectories(items: Iterable[Any]) -> list[Trajectory]:
    found: list[Trajectory] = []
    for item in items:
        if isinstance(item, TrajectoryGroup):
            found.extend(item.trajectories)
        elif isinstance(item, Trajectory):
            found.append(item)
        else:
            raise TypeError(f"metrics() takes Trajectory or TrajectoryGroup objects, got {type(item).__name__}")
    return found


def _ended_by(trajectory: Trajectory) -> str | None:
    for step in reversed(trajectory.steps):
        ended = step.policy_info.get("ended_by")
        if ended:
            return str(ended)
        if step.policy_stop_reason == "max_seq_len":
            return "max_seq_len"
    return None


def metrics(items: Iterable[Trajectory | TrajectoryGroup]) -> dict[str, float | int]:
    """Rollout metrics over trajectories (or groups of them).

    Returns a flat dict: ``num_samples``, ``total_turns``, ``avg_turns_per_sample``,
    ``max_turns_per_sample``, ``natural_termination_rate`` (the env ended the episode),
    ``truncation_rate`` (``max_seq_len`` or a collection budget cut it),
    ``max_turns_reached_rate``, ``mean_total_tokens_per_sample``,
    ``mean_gen_tokens_per_sample``, ``max_gen_tokens_per_sample``,
    ``mean_env_tokens_per_sample``, ``mean/max/min_total_reward``,
    ``invalid_action_count``, ``malformed_thinking_count``, ``retokenization_mismatches``.
    """
    trajectories = _trajectories(items)
    count = len(trajectories)
    if not count:
        return {"num_samples": 0}
    turns, generated, environment, rewards = [], [], [], []
    natural = truncated = max_turns = invalid = malformed = mismatches = 0
    for trajectory in trajectories:
        sampled_turns = sum(
            1 for step in trajectory.steps if step.policy_tokens or not step.policy_info.get("ended_by")
        )
        turns.append(sampled_turns)
        generated.append(sum(len(step.policy_tokens or ()) for step in trajectory.steps))
        environment.append(sum(len(step.observation_tokens or ()) for step in trajectory.steps))
        rewards.append(trajectory.total_reward)
        ended = _ended_by(trajectory)
        if ended == "max_turns" or trajectory.stop_reason == "max_steps":
            max_turns += 1
        elif ended == "max_seq_len" or trajectory.stop_reason in ("truncated", "timeout"):
            truncated += 1
        elif trajectory.terminated:
            natural += 1
        if trajectory.steps:
            last = trajectory.steps[-1].policy_info
            invalid += int(last.get("invalid_action_count", 0) or 0)
            malformed += int(last.get("malformed_thinking_count", 0) or 0)
        mismatches += check_provenance(trajectory)
    return {
        "num_samples": count,
        "total_turns": sum(turns),
        "avg_turns_per_sample": sum(turns) / count,
        "max_turns_per_sample": max(turns),
        "natural_termination_rate": natural / count,
        "truncation_rate": truncated / count,
        "max_turns_reached_rate": max_turns / count,
        "mean_total_tokens_per_sample": (sum(generated) + sum(environment)) / count,
        "mean_gen_tokens_per_sample": sum(generated) / count,
        "max_gen_tokens_per_sample": max(generated),
        "mean_env_tokens_per_sample": sum(environment) / count,
        "mean_total_reward": sum(rewards) / count,
        "max_total_reward": max(rewards),
        "min_total_reward": min(rewards),
        "invalid_action_count": invalid,
        "malformed_thinking_count": malformed,
        "retokenization_mismatches": mismatches,
    }
