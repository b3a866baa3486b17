"""Before/after evaluation: run a policy on an env's test split and report pass rate and reward.

Each :class:`PolicyEvaluation` keeps the pass rate of every task, so that a :class:`Comparison`
can say whether training changed the pass rate by more than noise: the change is paired by
task (the same tasks before and after), with the standard error of the per-task
differences (:func:`rolloutgym_trl.stats.paired_change`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .stats import Change, mean_and_error, paired_change

__all__ = ["Comparison", "PolicyEvaluation", "evaluate_policy"]


@dataclass(frozen=True)
class PolicyEvaluation:
    """One policy on one env split (``task_pass_rates``: task id -> share of its episodes that passed)."""

    env_id: str
    policy: str
    split: str | None
    num_trajectories: int
    pass_rate: float
    mean_reward: float
    task_pass_rates: dict[str, float] = field(default_factory=dict)

    @property
    def standard_error(self) -> float:
        """The standard error of the pass rate over tasks (0 when fewer than two tasks)."""
        return mean_and_error(list(self.task_pass_rates.values()))[1]

    def to_dict(self) -> dict[str, Any]:
        data = {key: value for key, value in self.__dict__.items() if key != "task_pass_rates"}
        data["pass_rate_error"] = self.standard_error
        data["num_tasks"] = len(self.task_pass_rates)
        return data


@dataclass(frozen=True)
class Comparison:
    """The same evaluation before and after training."""

    before: PolicyEvaluation
    after: PolicyEvaluation

    @property
    def change(self) -> Change | None:
        """The pass-rate change paired by task, with its standard error (None without per-task results)."""
        return paired_change(self.before.task_pass_rates, self.after.task_pass_rates)

    def lines(self) -> list[str]:
        """Human-readable lines for the terminal."""
        header = f"{self.before.env_id} ({self.before.split or 'all'} split, {self.after.num_trajectories} episodes)"
        lines = [header]
        for label, evaluation in (("before", self.before), ("after ", self.after)):
            lines.append(
                f"  {label}  {evaluation.policy:<40} pass rate {evaluation.pass_rate:6.1%} ± "
                f"{evaluation.standard_error * 100:4.1f}  mean reward {evaluation.mean_reward:.3f}"
            )
        change = self.change
        if change is not None:
            lines.append(f"  change  {change.line()}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"before": self.before.to_dict(), "after": self.after.to_dict()}
        change = self.change
        if change is not None:
            data["change"] = {"delta": change.delta, "error": change.error, "z": change.z, "tasks": change.tasks}
        return data


def _split_or_none(env_id: str, split: str | None) -> str | None:
    import rolloutgym as rg
    from rolloutgym.registry import task_split
    from rolloutgym.sources import is_env_url, resolve_env

    if is_env_url(env_id):  # a served env: its splits are its tasks'
        return split if split in {task_split(item) for item in resolve_env(env_id).tasks} else None
    spec = rg.get_registry().resolve_env(env_id).spec
    return split if split in spec.splits else None


def _task_pass_rates(groups: Any, threshold: float) -> dict[str, float]:
    rates: dict[str, float] = {}
    for group in groups:
        values = [float(score.value) for score in group.scores]
        if values:
            rates[str(group.item_id)] = sum(value >= threshold for value in values) / len(values)
    return rates


def evaluate_policy(
    env_id: str,
    policy: str,
    *,
    split: str | None = "test",
    num_rollouts: int = 1,
    policy_options: Mapping[str, Any] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    limit: int | None = None,
) -> PolicyEvaluation:
    """Run ``policy`` (e.g. ``hf:./out``) on ``env_id``'s ``split`` (every task when the env has no such split)."""
    import rolloutgym as rg

    chosen = _split_or_none(env_id, split)
    result = rg.run(
        env_id,
        policy=policy,
        split=chosen,
        num_rollouts=num_rollouts,
        limit=limit,
        seed=0,
        out=None,
        concurrency=4,
        policy_options=dict(policy_options or {}),
        env_kwargs=dict(env_kwargs or {}),
    )
    summary = result.summary
    threshold = float(result.header.get("pass_threshold", 1.0))
    return PolicyEvaluation(
        env_id,
        policy,
        chosen,
        summary.num_trajectories,
        float(summary.pass_rate),
        float(summary.mean_reward),
        _task_pass_rates(result.groups, threshold),
    )
