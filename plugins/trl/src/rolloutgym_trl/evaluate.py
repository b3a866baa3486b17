"""Before/after evaluation: run a policy on an env's test split and report pass rate and reward."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Comparison", "Evaluation", "evaluate_policy"]


@dataclass(frozen=True)
class Evaluation:
    """One policy on one env split."""

    env_id: str
    policy: str
    split: str | None
    num_trajectories: int
    pass_rate: float
    mean_reward: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Comparison:
    """The same evaluation before and after training."""

    before: Evaluation
    after: Evaluation

    def lines(self) -> list[str]:
        """Human-readable lines for the terminal."""
        header = f"{self.before.env_id} ({self.before.split or 'all'} split, {self.after.num_trajectories} episodes)"
        return [
            header,
            f"  before  {self.before.policy:<40} pass rate {self.before.pass_rate:6.1%}  mean reward "
            f"{self.before.mean_reward:.3f}",
            f"  after   {self.after.policy:<40} pass rate {self.after.pass_rate:6.1%}  mean reward "
            f"{self.after.mean_reward:.3f}",
        ]

    def to_dict(self) -> dict[str, Any]:
        return {"before": self.before.to_dict(), "after": self.after.to_dict()}


def _split_or_none(env_id: str, split: str | None) -> str | None:
    import rolloutgym as rg

    spec = rg.get_registry().resolve_env(env_id).spec
    return split if split in spec.splits else None


def evaluate_policy(
    env_id: str,
    policy: str,
    *,
    split: str | None = "test",
    num_rollouts: int = 1,
    policy_options: Mapping[str, Any] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    limit: int | None = None,
) -> Evaluation:
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
    return Evaluation(
        env_id, policy, chosen, summary.num_trajectories, float(summary.pass_rate), float(summary.mean_reward)
    )
