"""The tree executor: each task's group is a rollout tree (``rolloutgym run --branch-at``).

Per task: one trunk episode, then ``-n`` continuations from each chosen step
(:func:`rolloutgym.rollouts.arollout_tree`), written as one group (member 0 the trunk). Trees of
different tasks run concurrently, at most ``concurrency`` at a time, in this process.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import Any

from rolloutgym_protocol import RolloutError, TrajectoryGroup

from ..rollouts import aclose_env, arollout_tree, branch_steps
from ..sources import ResolvedEnv, ResolvedPolicy
from .base import Executor, GroupJob, OnGroup

__all__ = ["TreeExecutor"]


class TreeExecutor(Executor):
    """Runs every job as a rollout tree branching at ``branch_at`` (see :func:`~rolloutgym.arollout_tree`)."""

    name = "tree"

    def __init__(self, branch_at: Any) -> None:
        self.branch_at = branch_steps(branch_at)

    async def _tree(self, env: ResolvedEnv, policy: Any, job: GroupJob) -> TrajectoryGroup:
        item = env.tasks[job.task_index]
        environment = None
        try:
            environment = env.build(item)
            if inspect.isawaitable(environment):
                environment = await environment
            return await arollout_tree(
                environment,
                policy,
                branch_at=self.branch_at,
                num_branches=job.num_rollouts,
                seed=job.seeds[0],
                options=job.options,
                max_steps=job.max_steps,
                metadata={"task_id": job.task_id},
                item=item,
                item_id=job.task_id,
            )
        except Exception as exc:  # a failed tree is recorded, as a failed member is
            error = RolloutError.from_exception(exc, where="tree", member=0)
            return TrajectoryGroup(item, job.task_id, (), errors=(error,), metadata={"task_index": job.task_index})
        finally:
            if environment is not None:
                await aclose_env(environment)

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
        gate = asyncio.Semaphore(concurrency)

        async def one(job: GroupJob) -> None:
            async with gate:
                group = await self._tree(env, policy.policy, job)
            group.metadata["task_index"] = job.task_index
            reported = on_group(job, group)
            if inspect.isawaitable(reported):
                await reported

        async with asyncio.TaskGroup() as tasks:
            for job in jobs:
                tasks.create_task(one(job))
