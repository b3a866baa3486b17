"""The default executor: every member of every group on one asyncio event loop."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from rolloutgym_protocol import RolloutError, Trajectory, TrajectoryGroup

from ..rollouts._group import _error_record, _run_member
from .base import EnvSource, Executor, GroupJob, OnGroup, PolicySource

__all__ = ["LocalExecutor"]


class LocalExecutor(Executor):
    """Runs members with at most ``concurrency`` episodes in flight, in task order.

    Groups are reported as soon as their last member finishes, so a run file grows
    while the run is going.
    """

    name = "local"

    def __init__(self, registry: Any = None) -> None:
        self.registry = registry

    async def run(
        self,
        env: EnvSource,
        policy: PolicySource,
        jobs: Sequence[GroupJob],
        *,
        concurrency: int,
        on_group: OnGroup,
        policy_object: Any = None,
    ) -> None:
        import asyncio

        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        resolved = env.resolve(self.registry)
        policy_instance = policy_object if policy_object is not None else policy.build(self.registry)
        items = resolved.tasks
        pending = {id(job): job.num_rollouts for job in jobs}
        results: dict[int, list[Trajectory | RolloutError | None]] = {id(job): [None] * job.num_rollouts for job in jobs}
        members = iter([(job, member) for job in jobs for member in range(job.num_rollouts)])

        async def finish(job: GroupJob) -> None:
            outcome = results.pop(id(job))
            trajectories = tuple(r for r in outcome if isinstance(r, Trajectory))
            errors = tuple(r for r in outcome if isinstance(r, RolloutError))
            group = TrajectoryGroup(items[job.task_index], job.task_id, trajectories, (), errors, {"task_index": job.task_index})
            reported = on_group(job, group)
            if inspect.isawaitable(reported):
                await reported

        async def worker() -> None:
            for job, member in members:
                try:
                    outcome: Trajectory | RolloutError = await _run_member(
                        items[job.task_index],
                        resolved.make,
                        policy_instance,
                        member,
                        job.seeds[member],
                        job.options,
                        job.max_steps,
                        job.timeout,
                        {"task_id": job.task_id},
                    )
                except Exception as exc:  # recorded, never a silent zero
                    outcome = _error_record(exc, member)
                results[id(job)][member] = outcome
                pending[id(job)] -= 1
                if pending[id(job)] == 0:
                    await finish(job)

        total = sum(job.num_rollouts for job in jobs)
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(concurrency, total))):
                group.create_task(worker())
