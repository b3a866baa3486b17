"""The default executor: every member of every group on one asyncio event loop."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator, Sequence
from typing import Any

from ..rollouts import GroupCollector, LoopTurns
from ..sources import ResolvedEnv, ResolvedPolicy
from .base import Executor, GroupJob, OnGroup, OnMember, run_job_member

__all__ = ["LocalExecutor"]


class LocalExecutor(Executor):
    """Runs members with at most ``concurrency`` episodes in flight, in task order.

    Groups are reported as soon as their last member finishes, so a run file grows
    while the run is going. Work is planned as it is consumed: a group is opened when its
    first member starts and holds only its finished members, so memory follows the
    concurrency and the members finished, not ``-n`` × tasks; a worker whose members never
    wait hands the event loop a turn every few milliseconds, so Ctrl-C is heard at once.
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
        on_member: OnMember | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        items = env.tasks
        build = env.build
        policy_instance = policy.policy
        collector = GroupCollector()

        def planned() -> Iterator[tuple[int, Any, int]]:
            for position, job in enumerate(jobs):
                collector.open(
                    position, items[job.task_index], job.task_id, job.num_rollouts, {"task_index": job.task_index}
                )
                for member in range(job.num_rollouts):
                    yield position, job, member

        members = planned()

        async def worker() -> None:
            turns = LoopTurns()
            while True:
                if turns.due():
                    await asyncio.sleep(0)  # let the loop deliver a cancellation (Ctrl-C) and run the others
                planned_member = next(members, None)  # taken after the turn: members start in order
                if planned_member is None:
                    return
                position, job, member = planned_member
                outcome = await run_job_member(job, member, items[job.task_index], build, policy_instance)
                if on_member is not None:
                    on_member(job, member)
                group = collector.add(position, member, outcome)
                if group is not None:
                    reported = on_group(job, group)
                    if inspect.isawaitable(reported):
                        await reported

        total = sum(job.num_rollouts for job in jobs)
        async with asyncio.TaskGroup() as tasks:
            for _ in range(max(1, min(concurrency, total))):
                tasks.create_task(worker())
