"""How the Ray executor's members run: in the workers (whole episodes, in batches) or driven from here.

``"actor"`` placement: :func:`run_in_workers` sends consecutive members in batches of one
worker's slots (one Ray call per batch). ``"driver"`` placement: :func:`run_on_driver` runs
the driver's policy here against env instances that live in the workers. Either way a
member whose worker dies is run once more on another worker, and a finished group goes to
``on_group`` as soon as its last member is back (:class:`RunGroups`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import Any

from rolloutgym_protocol import RolloutError, Trajectory

from ..rollouts import GroupCollector, error_record
from ._ray_leased_env import LeasedEnv, result_of
from ._ray_pool import WORKER_LOST, Worker, WorkerPool
from ._ray_worker import RunSpec
from .base import GroupJob, OnGroup, run_job_member

__all__ = ["RunGroups", "lost_record", "run_in_workers", "run_on_driver"]


def lost_record(exc: BaseException, member: int) -> RolloutError:
    message = (
        f"the Ray worker running this member died, and so did the worker of its one retry: {type(exc).__name__}: {exc}"
    )
    return RolloutError("WorkerLost", message[:2000], "engine", member, None, None)


class RunGroups:
    """The run's :class:`GroupCollector`, reporting each finished group to ``on_group``."""

    def __init__(self, jobs: Sequence[GroupJob], items: Sequence[Any], on_group: OnGroup) -> None:
        self.jobs = jobs
        self.on_group = on_group
        self.collector = GroupCollector()
        for position, job in enumerate(jobs):
            self.collector.open(
                position, items[job.task_index], job.task_id, job.num_rollouts, {"task_index": job.task_index}
            )

    def retried(self, position: int) -> None:
        self.collector.note(position, retried=True)

    async def add(self, position: int, member: int, outcome: Trajectory | RolloutError) -> None:
        group = self.collector.add(position, member, outcome)
        if group is not None:
            reported = self.on_group(self.jobs[position], group)
            if inspect.isawaitable(reported):
                await reported


async def run_in_workers(
    pool: WorkerPool, spec: RunSpec, jobs: Sequence[GroupJob], groups: RunGroups, limit: int
) -> None:
    """Whole members run in the workers, in batches of one worker's slots.

    A batch holds consecutive members, of one group or of several small ones, so a
    run of many one-member groups costs one call per batch, not one per group.
    """
    budget = asyncio.Semaphore(limit)
    size = pool.slots
    batch: list[tuple[int, GroupJob, int]] = []
    async with asyncio.TaskGroup() as tasks:
        for position, job in enumerate(jobs):
            for member in range(job.num_rollouts):
                await budget.acquire()
                batch.append((position, job, member))
                if len(batch) == size:
                    tasks.create_task(run_batch(pool, spec, batch, groups, budget))
                    batch = []
        if batch:
            tasks.create_task(run_batch(pool, spec, batch, groups, budget))


async def run_batch(
    pool: WorkerPool,
    spec: RunSpec,
    batch: list[tuple[int, GroupJob, int]],
    groups: RunGroups,
    budget: asyncio.Semaphore,
) -> None:
    work = [(job, member) for _, job, member in batch]
    try:
        outcomes: list[Trajectory | RolloutError] = []
        for attempt in (1, 2):
            worker = pool.pick()
            worker.load += len(batch)
            try:
                outcomes = await result_of(worker.handle.run_members.remote(spec, work))
            except WORKER_LOST as exc:
                pool.lost(worker)
                if attempt == 1:
                    for position in {position for position, _, _ in batch}:
                        groups.retried(position)
                    continue
                outcomes = [lost_record(exc, member) for _, member in work]
            except Exception as exc:  # a failure of the worker code itself: recorded, never a silent zero
                outcomes = [error_record(exc, member) for _, member in work]
            finally:
                worker.load -= len(batch)
            break
        for (position, _, member), outcome in zip(batch, outcomes, strict=True):
            await groups.add(position, member, outcome)
    finally:
        for _ in batch:
            budget.release()


async def run_on_driver(
    pool: WorkerPool,
    spec: RunSpec,
    jobs: Sequence[GroupJob],
    groups: RunGroups,
    policy: Any,
    items: Sequence[Any],
    concurrency: int,
) -> None:
    """The policy runs here; each member's env instance lives in a worker."""
    budget = asyncio.Semaphore(concurrency)
    releases: list[Any] = []
    try:
        async with asyncio.TaskGroup() as tasks:
            for position, job in enumerate(jobs):
                for member in range(job.num_rollouts):
                    await budget.acquire()
                    tasks.create_task(
                        drive_member(pool, spec, position, job, member, groups, policy, items, budget, releases)
                    )
                    if len(releases) > 4 * concurrency:
                        done, releases[:] = releases[:], []
                        await asyncio.gather(*done, return_exceptions=True)
    finally:
        # Env hand-backs were not waited for one by one; a dead worker's are moot.
        await asyncio.gather(*releases, return_exceptions=True)


async def drive_member(
    pool: WorkerPool,
    spec: RunSpec,
    position: int,
    job: GroupJob,
    member: int,
    groups: RunGroups,
    policy: Any,
    items: Sequence[Any],
    budget: asyncio.Semaphore,
    releases: list[Any],
) -> None:
    try:
        outcome: Trajectory | RolloutError | None = None
        for attempt in (1, 2):
            worker: Worker = pool.pick()
            handle = worker.handle
            worker.load += 1

            async def open_env(item: Any, handle: Any = handle) -> LeasedEnv:
                # The first reset travels with the lease; the member's timeout covers both.
                opening = LeasedEnv.open(handle, spec, job.task_index, releases, (job.seeds[member], job.options))
                if job.timeout is None:
                    return await opening
                async with asyncio.timeout(job.timeout):
                    return await opening

            try:
                outcome = await run_job_member(
                    job, member, items[job.task_index], open_env, policy, passthrough=WORKER_LOST
                )
            except WORKER_LOST as exc:
                pool.lost(worker)
                if attempt == 1:
                    groups.retried(position)
                    continue
                outcome = lost_record(exc, member)
            except Exception as exc:  # recorded, never a silent zero
                outcome = error_record(exc, member)
            finally:
                worker.load -= 1
            break
        assert outcome is not None
        await groups.add(position, member, outcome)
    finally:
        budget.release()
