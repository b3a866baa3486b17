"""Summaries of a run: pass rate, mean reward, pass@k and pass^k, errors, turns, tokens, time.

A trajectory *passes* when its score value reaches the run's ``pass_threshold``
(default 1.0). Failed members (``RolloutError``) are not trajectories: they are counted
under ``errors`` and left out of pass rates and rewards, never scored as 0. Trajectories that
ended before the model spoke (``stop_reason`` in :data:`UNANSWERED_STOP_REASONS`: the first
prompt did not fit in ``max_seq_len``) are not answers either: they are counted under
``num_prompt_too_long`` and left out of pass rates and rewards the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import TrajectoryGroup

__all__ = [
    "UNANSWERED_STOP_REASONS",
    "GroupFacts",
    "RunSummary",
    "TaskSummary",
    "group_facts",
    "pass_at_k",
    "pass_hat_k",
    "summarize",
    "summary_ks",
]


UNANSWERED_STOP_REASONS = frozenset({"prompt_too_long"})
"""Stop reasons of episodes that ended before the model spoke: no answer, so no score to count."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: the chance that at least one of k draws (of n, c correct) passes."""
    if k > n or n == 0:
        return float("nan")
    return _curves(n, c, [k])[k][0]


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all of k draws pass (consistency, as in tau-bench)."""
    if k > n or n == 0:
        return float("nan")
    return _curves(n, c, [k])[k][1]


def summary_ks(n: int) -> list[int]:
    """The k of a summary's pass@k and pass^k for groups of ``n``: the powers of two up to n, and n."""
    ks = [1 << power for power in range(n.bit_length()) if 1 << power <= n]
    return ks + [n] if n and ks[-1] != n else ks


def _curves(n: int, c: int, ks: Sequence[int]) -> dict[int, tuple[float, float]]:
    """``{k: (pass@k, pass^k)}`` for n draws with c correct, in one pass of products (O(max k), no big integers).

    pass@k = 1 - prod_{i<k} (n-c-i)/(n-i) (no failure-only draw) and pass^k = prod_{i<k} (c-i)/(n-i):
    each factor is at most 1, so the running products never overflow and lose no precision to cancellation.
    """
    wanted = set(ks)
    result: dict[int, tuple[float, float]] = {}
    all_fail = all_pass = 1.0
    for i in range(max(ks, default=0)):
        all_fail *= max(n - c - i, 0) / (n - i)
        all_pass *= max(c - i, 0) / (n - i)
        if i + 1 in wanted:
            result[i + 1] = (1.0 - all_fail, all_pass)
    return result


def _pass_tables(tasks: Sequence[TaskSummary], n: int) -> tuple[dict[int, float], dict[int, float]]:
    """Mean pass@k and pass^k over tasks for k in :func:`summary_ks` (tasks with fewer than k draws left out).

    Linear in the number of rollouts: one pass of products per distinct (draws, passes) pair.
    """
    ks = summary_ks(n)
    pairs = Counter((task.trajectories, task.passes) for task in tasks)
    at: dict[int, float] = dict.fromkeys(ks, 0.0)
    hat: dict[int, float] = dict.fromkeys(ks, 0.0)
    counted: dict[int, int] = dict.fromkeys(ks, 0)
    for (draws, correct), count in pairs.items():
        for k, (value_at, value_hat) in _curves(draws, correct, [k for k in ks if k <= draws]).items():
            at[k] += value_at * count
            hat[k] += value_hat * count
            counted[k] += count
    return (
        {k: at[k] / counted[k] if counted[k] else 0.0 for k in ks},
        {k: hat[k] / counted[k] if counted[k] else 0.0 for k in ks},
    )


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
    pass_at: dict[int, float]  # k: 1, 2, 4, ... up to the group size, and the group size (summary_ks)
    pass_hat: dict[int, float]
    errors_by_type: dict[str, int]
    mean_turns: float
    total_tokens: int
    generated_tokens: int
    total_seconds: float
    tasks: list[TaskSummary] = field(default_factory=list)
    error_examples: dict[str, str] = field(default_factory=dict)
    num_prompt_too_long: int = 0  # trajectories that ended before the model spoke (not in the rates)

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
    unanswered: int = 0  # trajectories that ended before the model spoke (their scores are not in ``scores``)


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
    answered = [trajectory.stop_reason not in UNANSWERED_STOP_REASONS for trajectory in group.trajectories]
    return GroupFacts(
        group.item_id,
        tuple(score.value for score, kept in zip(group.scores, answered, strict=True) if kept),
        tuple(len(trajectory.steps) for trajectory, kept in zip(group.trajectories, answered, strict=True) if kept),
        tuple((error.error_type, error.where, error.error_message[:300]) for error in group.errors),
        total,
        generated,
        sum(float(trajectory.metadata.get("elapsed_seconds", 0.0)) for trajectory in group.trajectories),
        answered.count(False),
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
    unanswered = 0
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
        unanswered += facts.unanswered
    n = min(sizes) if sizes else 0
    pass_at, pass_hat = _pass_tables(tasks, n)
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
        num_prompt_too_long=unanswered,
    )
