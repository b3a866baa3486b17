"""The default executor: every member of every group on one asyncio event loop."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence

from ..rollouts import GroupCollector, run_member
from ..sources import ResolvedEnv, ResolvedPolicy
from .base import Executor, GroupJob, OnGroup

__all__ = ["LocalExecutor"]


class LocalExecutor(Executor):
    """Runs members with at most ``concurrency`` episodes in flight, in task order.

    Groups are reported as soon as their last member finishes, so a run file grows
    while the run is going.
    """

    name = "local"

    async def run(
        self,
        env: ResolvedEnv,
        policy: ResolvedPolicy,
        jobs: Sequence[GroupJob],
        *,
        concurrency: int,
        on_group: OnGroup,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        items = env.tasks
        build = env.build
        policy_instance = policy.policy
        collector = GroupCollector()
        for position, job in enumerate(jobs):
            collector.open(
                position, items[job.task_index], job.task_id, job.num_rollouts, {"task_index": job.task_index}
            )
        members = iter(
            [(position, job, member) for position, job in enumerate(jobs) for member in range(job.num_rollouts)]
        )

        async def worker() -> None:
            for position, job, member in members:
                outcome = await run_member(
                    items[job.task_index],
                    build,
                    policy_instance,
                    member,
                    job.seeds[member],
                    options=job.options,
                    max_steps=job.max_steps,
                    timeout=job.timeout,
                    metadata={"task_id": job.task_id},
                )
                group = collector.add(position, member, outcome)
                if group is not None:
                    reported = on_group(job, group)
                    if inspect.isawaitable(reported):
                        await reported

        total = sum(job.num_rollouts for job in jobs)
        async with asyncio.TaskGroup() as tasks:
            for _ in range(max(1, min(concurrency, total))):
                tasks.create_task(worker())
