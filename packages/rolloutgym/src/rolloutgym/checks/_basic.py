"""The conformance checks of the card: the oracle's ceiling, the null floor, determinism."""

from __future__ import annotations

import json
from typing import Any

from ..builtin.policies import NullPolicy, OraclePolicy
from ._episodes import Episode, EpisodeRunner
from ._records import FAIL, PASS, SKIP, CheckResult

__all__ = ["ceiling_result", "determinism_result", "floor_result", "run_baselines"]

_VOLATILE = ("elapsed_seconds", "elapsed", "duration", "started_at", "finished_at", "wall_seconds")


async def run_baselines(runner: EpisodeRunner, indices: list[int], seed: int) -> dict[str, dict[int, Episode]]:
    """The oracle's and the null policy's episode on every checked task (the probe compares against them)."""
    oracle, null = OraclePolicy(), NullPolicy()
    return {
        "oracle": {index: await runner.run(oracle, index, seed=seed) for index in indices},
        "null": {index: await runner.run(null, index, seed=seed) for index in indices},
    }


def ceiling_result(episodes: dict[int, Episode], max_score: float) -> CheckResult:
    """Pass when the oracle reaches ``max_score`` on every checked task."""
    if all(episode.error and "no reference solution" in episode.error for episode in episodes.values()):
        return CheckResult("ceiling", SKIP, "the env has no oracle (oracle_action); the ceiling cannot be measured")
    failures = [
        f"{episode.task}: {episode.shown()}{_feedback(episode)}"
        for episode in episodes.values()
        if episode.score < max_score
    ]
    scores = [episode.score for episode in episodes.values() if episode.trajectory is not None]
    metrics = {"max_score": max_score, "mean": _mean(scores), "tasks": len(episodes)}
    if failures:
        return CheckResult(
            "ceiling",
            FAIL,
            f"the oracle missed {max_score:g} on {len(failures)}/{len(episodes)} task(s)",
            failures,
            metrics,
        )
    return CheckResult("ceiling", PASS, f"the oracle scores {max_score:g} on {len(episodes)} task(s)", metrics=metrics)


def floor_result(
    episodes: dict[int, Episode], min_score: float, exempt: set[str], oracle: dict[int, Episode] | None = None
) -> CheckResult:
    """Pass when the null policy scores at most ``min_score``.

    Exempt: the tasks in ``exempt`` and those whose oracle does what null does (the right answer is to
    do nothing, TASKS.md rule 4).
    """
    failures = []
    exempt = set(exempt) | {
        episode.task for index, episode in episodes.items() if _same_actions(episode, (oracle or {}).get(index))
    }
    for episode in episodes.values():
        if episode.error:
            failures.append(f"{episode.task}: the null policy's episode raised {episode.error}")
        elif episode.score > min_score and episode.task not in exempt:
            failures.append(f"{episode.task}: {episode.shown()}{_feedback(episode)}")
    scores = [episode.score for episode in episodes.values() if episode.trajectory is not None]
    metrics = {"min_score": min_score, "mean": _mean(scores), "tasks": len(episodes), "exempt": sorted(exempt)}
    if failures:
        return CheckResult(
            "floor", FAIL, f"the null policy scored above {min_score:g} on {len(failures)} task(s)", failures, metrics
        )
    return CheckResult(
        "floor", PASS, f"the null policy scores {min_score:g} on {len(episodes)} task(s)", metrics=metrics
    )


async def determinism_result(runner: EpisodeRunner, index: int, first: Episode, seed: int) -> CheckResult:
    """Pass when the oracle's episode of one task, run again with its seed, has the same rewards and observations."""
    if first.trajectory is None:
        return CheckResult("determinism", SKIP, f"the oracle's episode of {first.task} raised; nothing to compare")
    second = await runner.run(OraclePolicy(), index, seed=seed)
    if second.trajectory is None:
        return CheckResult("determinism", FAIL, f"the oracle's second episode of {first.task} raised: {second.error}")
    a, b = _comparable(first.trajectory), _comparable(second.trajectory)
    if a == b:
        return CheckResult("determinism", PASS, f"two oracle episodes of {first.task} with seed {seed} are identical")
    where = _first_difference(a, b)
    return CheckResult(
        "determinism", FAIL, f"two oracle episodes of {first.task} with seed {seed} differ", [f"{first.task}: {where}"]
    )


def _same_actions(null: Episode, oracle: Episode | None) -> bool:
    if oracle is None or null.trajectory is None or oracle.trajectory is None:
        return False
    return _normalised(list(null.trajectory.actions)) == _normalised(list(oracle.trajectory.actions))


def _comparable(trajectory: Any) -> dict[str, Any]:
    return {
        "initial_observation": _normalised(trajectory.initial_observation),
        "rewards": list(trajectory.rewards),
        "observations": [_normalised(step.next_observation) for step in trajectory.steps],
        "score": trajectory.score.value,
    }


def _normalised(value: Any) -> Any:
    data = json.loads(json.dumps(value, sort_keys=True, default=repr))
    if isinstance(data, dict):
        for key in _VOLATILE:
            data.pop(key, None)
    return data


def _first_difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    for key in a:
        if a[key] != b[key]:
            if isinstance(a[key], list) and isinstance(b[key], list):
                for position, (left, right) in enumerate(zip(a[key], b[key], strict=False)):
                    if left != right:
                        return f"{key}[{position}]: {str(left)[:120]!r} then {str(right)[:120]!r}"
                return f"{key}: {len(a[key])} entries then {len(b[key])}"
            return f"{key}: {str(a[key])[:120]!r} then {str(b[key])[:120]!r}"
    return "no difference found"


def _feedback(episode: Episode) -> str:
    if episode.trajectory is None:
        return ""
    if episode.trajectory.stop_reason in ("timeout", "max_steps"):
        return f" (stopped: {episode.trajectory.stop_reason} after {len(episode.trajectory.steps)} steps)"
    feedback = episode.trajectory.score.feedback
    return f" ({feedback[:200]})" if feedback else ""


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
