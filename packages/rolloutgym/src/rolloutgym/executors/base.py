"""The executor interface: who runs the rollouts of a run, and where.

A run is a list of :class:`GroupJob` (one per task). An executor runs every member of
every job and calls ``on_group`` with each finished ``TrajectoryGroup`` as soon as its
last member finishes. Jobs, :class:`EnvSource` and :class:`PolicySource` are plain,
picklable data so that executors can rebuild envs and policies in other processes.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolloutgym_protocol import TrajectoryGroup

__all__ = ["EnvSource", "Executor", "GroupJob", "OnGroup", "PolicySource", "ResolvedEnv"]


@dataclass
class ResolvedEnv:
    """What a run needs to know about an environment: identity, tasks and a factory.

    ``make(item)`` builds a fresh env for one task item (``None`` when the env has no tasks).
    """

    env_id: str
    version: int | None
    tasks: list[Any]
    make: Callable[[Any], Any]
    source: str = "registry"
    plugin: str | None = None
    plugin_version: str | None = None
    replayable: bool = False
    max_steps: int | None = None
    timeout: float | None = None


@dataclass
class EnvSource:
    """A registered env id or an env file path, plus factory keyword arguments."""

    reference: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def is_file(self) -> bool:
        return self.reference.endswith((".py", ".json", ".jsonl")) or Path(self.reference).is_file()

    def resolve(self, registry: Any = None) -> ResolvedEnv:
        """Resolve through the registry (or load the env file)."""
        from ..registry import get_registry

        registry = registry or get_registry()
        if self.is_file:
            from ..declarative import resolve_env_file

            return resolve_env_file(self.reference, registry=registry, **self.kwargs)
        registered = registry.resolve_env(self.reference)
        spec = registered.spec
        items = registry.tasks(spec.id)
        kwargs = self.kwargs
        if items:
            make = lambda item: registry.make(spec.id, task=item, **kwargs)  # noqa: E731
        else:
            items = [None]
            make = lambda item: registry.make(spec.id, **kwargs)  # noqa: E731
        return ResolvedEnv(
            env_id=spec.id,
            version=spec.version,
            tasks=items,
            make=make,
            source="registry",
            plugin=registered.plugin.distribution,
            plugin_version=registered.plugin.version,
            replayable=spec.replayable,
            max_steps=spec.max_steps,
            timeout=spec.timeout,
        )


@dataclass
class PolicySource:
    """A policy reference (``"provider[:model]"``) and its options."""

    reference: str
    options: dict[str, Any] = field(default_factory=dict)

    def build(self, registry: Any = None) -> Any:
        from ..registry import get_registry

        return (registry or get_registry()).make_policy(self.reference, **self.options)


@dataclass
class GroupJob:
    """One task's group: which task, how many members, their seeds and budgets."""

    task_index: int
    task_id: str
    num_rollouts: int
    seeds: list[int | None]
    options: dict[str, Any] | None = None
    max_steps: int | None = None
    timeout: float | None = None


OnGroup = Callable[[GroupJob, TrajectoryGroup], Awaitable[None] | None]


class Executor(abc.ABC):
    """Runs the members of :class:`GroupJob` s and reports finished groups."""

    name: str = "executor"

    @abc.abstractmethod
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
        """Run every job; call ``on_group(job, group)`` once per finished job.

        ``policy_object`` is an already-built policy for in-process executors (the
        Python API may pass any callable); remote executors rebuild from ``policy``.
        """
