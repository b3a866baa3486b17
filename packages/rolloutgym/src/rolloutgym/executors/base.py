"""The executor interface: who runs the rollouts of a run, and where.

A run is a list of :class:`GroupJob` (one per task). The runner resolves the env and the
policy once (:mod:`rolloutgym.sources`) and hands the results to an executor, which runs
every member of every job and calls ``on_group`` with each finished ``TrajectoryGroup``
as soon as its last member finishes. Executors resolve nothing themselves; one that runs
in other processes (Ray) ships the picklable sources (``env.env_source``,
``policy.source``) and the registry's plugins there.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol import TrajectoryGroup

from ..rollouts import run_member
from ..sources import ResolvedEnv, ResolvedPolicy

__all__ = ["Executor", "GroupJob", "OnGroup", "OnMember", "reports_members", "run_job_member"]


@dataclass
class GroupJob:
    """One task's group: which task, how many members, their seeds and budgets."""

    task_index: int
    task_id: str
    num_rollouts: int
    seeds: Sequence[int | None]  # indexed per member; a run plans them lazily (rollouts.planned_seeds)
    options: dict[str, Any] | None = None
    max_steps: int | None = None
    timeout: float | None = None


def run_job_member(
    job: GroupJob, member: int, item: Any, make_env: Callable[[Any], Any], policy: Any, **options: Any
) -> Coroutine[Any, Any, Any]:
    """:func:`~rolloutgym.rollouts.run_member` for ``member`` of ``job``: the member's seed, the
    job's reset options, budgets and task id; ``options`` go through (``release``, ``passthrough``).

    Every executor starts its episodes here, so a member runs the same wherever it runs.
    """
    return run_member(
        item,
        make_env,
        policy,
        member,
        job.seeds[member],
        options=job.options,
        max_steps=job.max_steps,
        timeout=job.timeout,
        metadata={"task_id": job.task_id},
        **options,
    )


OnGroup = Callable[[GroupJob, TrajectoryGroup], Awaitable[None] | None]
OnMember = Callable[[GroupJob, int], None]
"""Called with ``(job, member)`` as each episode ends (progress); an executor may take it as ``on_member``."""


def reports_members(executor: Any) -> bool:
    """Whether ``executor.run`` takes the optional ``on_member`` keyword (it reports each episode)."""
    import inspect

    try:
        return "on_member" in inspect.signature(executor.run).parameters
    except (TypeError, ValueError):
        return False


class Executor(abc.ABC):
    """Runs the members of :class:`GroupJob` s and reports finished groups."""

    name: str = "executor"

    @abc.abstractmethod
    async def run(
        self,
        env: ResolvedEnv,
        policy: ResolvedPolicy,
        jobs: Sequence[GroupJob],
        *,
        concurrency: int,
        on_group: OnGroup,
    ) -> None:
        """Run every job; call ``on_group(job, group)`` once per finished job.

        Args:
            env: the run's env, resolved once by the runner (build envs with
                ``env.make_task(job.task_index)``).
            policy: the built policy and its reference.
        """
