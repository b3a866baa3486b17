"""Re-grading stored trajectories with the current graders, without calling the policy.

Works for environments that declare ``replayable=True``: each trajectory's actions are
replayed on a fresh env for the same task, reset with the same seed, and the new final
score replaces the stored one.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolloutgym_protocol import Trajectory, TrajectoryGroup
from rolloutgym_protocol.errors import ConfigError

from .rollouts import aclose_env, arollout
from .runs import Run, RunWriter, iter_run, read_header
from .sources import ResolvedEnv, resolve_recorded

__all__ = ["RescoreResult", "rescore_run"]


@dataclass
class RescoreResult:
    path: Path
    trajectories: int
    changed: int
    mismatched_replays: int


async def _replay(resolved: ResolvedEnv, task_index: int, trajectory: Trajectory) -> Trajectory:
    actions = iter(trajectory.actions)
    environment = resolved.make_task(task_index)
    try:
        return await arollout(
            environment,
            lambda observation: next(actions),
            seed=trajectory.metadata.get("seed"),
            max_steps=len(trajectory.steps),
            metadata=trajectory.metadata,
        )
    finally:
        await aclose_env(environment)


def rescore_run(
    path: str | Path,
    *,
    out: str | Path | None = None,
    registry: Any = None,
    force: bool = False,
    allow_partial_tail: bool = False,
) -> RescoreResult:
    """Re-grade every trajectory of a run file and write a new run file, group by group (the
    groups are streamed: memory does not grow with the run).

    Raises:
        ConfigError: the env does not declare replayable grading (unless ``force``).
        OutputError: ``out`` cannot be written (the groups re-graded so far are in it).
    """
    run = Run(Path(path), read_header(path))  # groups are streamed below, not held
    env_kwargs = dict(run.header.get("options", {}).get("env_kwargs") or {})
    # A --mix run lists its envs under "mixture"; each task position maps to (env, task index).
    targets: dict[int, tuple[ResolvedEnv, int]] = {}
    resolved: ResolvedEnv | None = None
    for env_info in run.header.get("mixture") or [run.header["env"]]:
        if not env_info.get("replayable") and not force:
            raise ConfigError(
                f"{env_info['id']} does not declare replayable grading, so its trajectories cannot be re-graded "
                "without re-running the policy (pass --force to replay anyway)"
            )
        resolved = resolve_recorded(env_info, env_kwargs=env_kwargs, run_path=path, registry=registry)
        if resolved.env_id != env_info["id"] and not force:
            raise ConfigError(
                f"the run was made on {env_info['id']} but {resolved.env_id} resolved; tasks may differ, "
                "so rescoring refuses (pass --force to override)"
            )
        for position, task_index in zip(env_info.get("positions", ()), env_info.get("task_indices", ()), strict=False):
            targets[int(position)] = (resolved, int(task_index))
    assert resolved is not None
    out_path = Path(out) if out else Path(path).with_suffix(".rescored.jsonl")
    header = dict(run.header, rescored_from=str(path))
    changed = mismatched = total = 0

    async def regrade(writer: RunWriter) -> None:
        nonlocal changed, mismatched, total
        # A torn last line (a killed run) is left out with allow_partial_tail: that task is not re-graded.
        for task_index, group in iter_run(path, allow_partial_tail=allow_partial_tail):
            trajectories = []
            for old in group.trajectories:
                target, target_index = targets.get(task_index, (resolved, task_index))
                new = await _replay(target, target_index, old)
                total += 1
                if [s.to_dict()["next_observation"] for s in new.steps] != [
                    s.to_dict()["next_observation"] for s in old.steps
                ]:
                    mismatched += 1
                if new.score != old.score:
                    changed += 1
                trajectories.append(new)
            regraded = TrajectoryGroup(group.item, group.item_id, tuple(trajectories), (), group.errors, group.metadata)
            writer.write_group(task_index, regraded)

    with RunWriter(out_path, header) as writer:
        asyncio.run(regrade(writer))
    return RescoreResult(out_path, total, changed, mismatched)
