"""Summaries of a run: pass rate, mean reward, pass@k and pass^k, errors, turns, tokens, time.

A trajectory *passes* when its score value reaches the run's ``pass_threshold``
(default 1.0). Failed members (``RolloutError``) are not trajectories: they are counted
under ``errors`` and left out of pass rates and rewards, never scored as 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import TrajectoryGroup

__all__ = ["GroupFacts", "RunSummary", "TaskSummary", "group_facts", "pass_at_k", "pass_hat_k", "summarize"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: the chance that at least one of k draws (of n, c correct) passes."""
    if k > n or n == 0:
        return float("nan")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all of k draws pass (consistency, as in tau-bench)."""
    if k > n or n == 0:
        return float("nan")
    return math.comb(c, k) / math.comb(n, k)


@dataclass
class TaskSummary:
    task_id: str
    task_index: int
    trajectories: int
    passes: int
    mean_reward: float
    mean_turns: float
    errors: int

    @property
    def pass_rate(self) -> float:
        return self.passes / self.trajectories if self.trajectories else 0.0


@dataclass
class RunSummary:
    env_id: str
    policy: str
    num_tasks: int
    num_trajectories: int
    num_errors: int
    pass_rate: float
    mean_reward: float
    pass_at: dict[int, float]
    pass_hat: dict[int, float]
    errors_by_type: dict[str, int]
    mean_turns: float
    total_tokens: int
    generated_tokens: int
    total_seconds: float
    tasks: list[TaskSummary] = field(default_factory=list)
    error_examples: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = {key: value for key, value in self.__dict__.items() if key != "tasks"}
        data["tasks"] = [dict(task.__dict__, pass_rate=task.pass_rate) for task in self.tasks]
        return data


@dataclass(frozen=True)
class GroupFacts:
    """What :func:`summarize` reads of one group: a few numbers per trajectory.

    Readers that stream large run files (the report) keep these instead of the groups.
    """

    item_id: str
    scores: tuple[float, ...]
    turns: tuple[int, ...]
    errors: tuple[tuple[str, str, str], ...]  # (error type, where, message cut to 300 characters)
    total_tokens: int
    generated_tokens: int
    seconds: float


def group_facts(group: TrajectoryGroup) -> GroupFacts:
    """The :class:`GroupFacts` of a finished group."""
    generated = total = 0
    for trajectory in group.trajectories:
        for step in trajectory.steps:
            if step.policy_tokens is not None:
                generated += len(step.policy_tokens)
                total += len(step.policy_tokens)
            if step.observation_tokens is not None:
                total += len(step.observation_tokens)
            if step.policy_tokens is None:
                # A server that returns no token ids (OpenAI-compatible APIs) still reports its
                # usage: count the tokens it billed for this turn.
                usage = step.policy_info.get("usage") if step.policy_info else None
                if isinstance(usage, dict):
                    completion = usage.get("completion_tokens")
                    prompt = usage.get("prompt_tokens")
                    if isinstance(completion, int):
                        generated += completion
                        total += completion
                    if isinstance(prompt, int):
                        total += prompt
    return GroupFacts(
        group.item_id,
        tuple(score.value for score in group.scores),
        tuple(len(trajectory.steps) for trajectory in group.trajectories),
        tuple((error.error_type, error.where, error.error_message[:300]) for error in group.errors),
        total,
        generated,
        sum(float(trajectory.metadata.get("elapsed_seconds", 0.0)) for trajectory in group.trajectories),
    )


def summarize(
    groups: Sequence[TrajectoryGroup | GroupFacts],
    *,
    header: dict[str, Any] | None = None,
    task_indices: Sequence[int] | None = None,
) -> RunSummary:
    """Summarise finished groups or their :class:`GroupFacts` (the header supplies env, policy and threshold)."""
    header = header or {}
    threshold = float(header.get("pass_threshold", 1.0))
    indices = list(task_indices) if task_indices is not None else list(range(len(groups)))
    tasks: list[TaskSummary] = []
    errors: Counter[str] = Counter()
    examples: dict[str, str] = {}
    rewards: list[float] = []
    turns: list[int] = []
    passes = 0
    total_tokens = generated_tokens = 0
    seconds = 0.0
    sizes = []
    for index, given in zip(indices, groups, strict=True):
        facts = given if isinstance(given, GroupFacts) else group_facts(given)
        values = list(facts.scores)
        group_turns = facts.turns
        task_passes = sum(value >= threshold for value in values)
        for error_type, where, message in facts.errors:
            errors[error_type] += 1
            examples.setdefault(error_type, f"[{where}] {message}"[:300])
        tasks.append(
            TaskSummary(
                facts.item_id,
                index,
                len(values),
                task_passes,
                sum(values) / len(values) if values else 0.0,
                sum(group_turns) / len(group_turns) if group_turns else 0.0,
                len(facts.errors),
            )
        )
        rewards.extend(values)
        turns.extend(group_turns)
        passes += task_passes
        sizes.append(len(values))
        total_tokens += facts.total_tokens
        generated_tokens += facts.generated_tokens
        seconds += facts.seconds
    n = min(sizes) if sizes else 0
    pass_at: dict[int, float] = {}
    pass_hat: dict[int, float] = {}
    for k in range(1, n + 1):
        at = [pass_at_k(task.trajectories, task.passes, k) for task in tasks if task.trajectories >= k]
        hat = [pass_hat_k(task.trajectories, task.passes, k) for task in tasks if task.trajectories >= k]
        pass_at[k] = sum(at) / len(at) if at else 0.0
        pass_hat[k] = sum(hat) / len(hat) if hat else 0.0
    return RunSummary(
        env_id=header.get("env", {}).get("id", "?"),
        policy=header.get("policy", "?"),
        num_tasks=len(groups),
        num_trajectories=len(rewards),
        num_errors=sum(errors.values()),
        pass_rate=passes / len(rewards) if rewards else 0.0,
        mean_reward=sum(rewards) / len(rewards) if rewards else 0.0,
        pass_at=pass_at,
        pass_hat=pass_hat,
        errors_by_type=dict(errors),
        mean_turns=sum(turns) / len(turns) if turns else 0.0,
        total_tokens=total_tokens,
        generated_tokens=generated_tokens,
        total_seconds=seconds,
        tasks=tasks,
        error_examples=examples,
    )
