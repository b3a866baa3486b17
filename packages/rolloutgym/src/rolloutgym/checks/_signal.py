"""Signal: with a cheap policy and k samples per task, the share of tasks whose rewards differ.

A group whose rewards are all equal gives GRPO no gradient; an env where a cheap policy's
groups are all flat may still teach a stronger model, so a share of 0 is a warning, not a failure.
"""

from __future__ import annotations

from typing import Any

from ..sources import resolve_policy
from ._episodes import EpisodeRunner
from ._records import PASS, SKIP, WARN, CheckResult

__all__ = ["signal_result"]


async def signal_result(
    runner: EpisodeRunner, indices: list[int], policy: str, k: int, seed: int, registry: Any
) -> CheckResult:
    """The ``signal`` result: ``k`` episodes of ``policy`` on each checked task."""
    if k < 2:
        return CheckResult("signal", SKIP, f"k must be at least 2 to compare rewards, got {k}")
    built = resolve_policy(policy, registry).policy
    varied, flat, failed = [], [], []
    for index in indices:
        episodes = [await runner.run(built, index, seed=seed + member) for member in range(k)]
        scores = [episode.score for episode in episodes if episode.trajectory is not None]
        task = runner.task_id(index)
        if len(scores) < k:
            failed.append(f"{task}: {k - len(scores)} of {k} episodes raised ({episodes[0].error or 'see the run'})")
        (varied if len(set(scores)) > 1 else flat).append(task)
    share = len(varied) / len(indices) if indices else 0.0
    metrics = {"policy": policy, "k": k, "share": round(share, 4), "tasks": len(indices), "varied": varied}
    summary = f"{share:.0%} of {len(indices)} task(s) give {policy} unequal rewards over {k} samples"
    if failed:
        return CheckResult("signal", WARN, summary + f"; {len(failed)} task(s) had errors", failed, metrics)
    if not varied:
        return CheckResult("signal", WARN, summary + " (no gradient from this policy)", metrics=metrics)
    return CheckResult("signal", PASS, summary, metrics=metrics)
