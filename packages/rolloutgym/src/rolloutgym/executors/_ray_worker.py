"""The Ray actor of the Ray executor: one process that holds env instances and runs episodes.

Plain Python (the executor wraps it with ``ray.remote``) so it can be read and tested
without a cluster. A worker serves any number of runs: each call carries a small
:class:`RunSpec` saying which env (and, for actor-side policies, which policy) it is for;
the worker resolves each spec once and keeps, per spec, a bounded pool of idle env
instances keyed by task, so members of a group that land on the same worker reuse env
instances (``reset`` between episodes) instead of building new ones.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol import AsyncEnv, RolloutError, Trajectory, find_attribute

from ..registry import adapt_env
from ..rollouts import aclose_env
from ..sources import EnvSource, PolicySource, ResolvedEnv, resolve_env, resolve_policy
from .base import GroupJob, run_job_member

__all__ = ["EnvPool", "RegistryMirror", "RolloutWorker", "RunSpec"]

# Forwarded from the driver so that every worker loads the same plugins.
PLUGIN_VARIABLES = ("ROLLOUTGYM_PLUGINS", "ROLLOUTGYM_DISABLE_PLUGINS")


@dataclass(frozen=True)
class RegistryMirror:
    """What a worker's registry copies of the driver's: entry points or not, core or not, added plugins."""

    load_entry_points: bool = True
    core: bool = True
    plugins: Sequence[tuple[str, Any]] = ()

    def build(self) -> Any:
        from ..registry import Registry

        registry = Registry(load_entry_points=self.load_entry_points, core=self.core)
        present = {info.name for info in registry.plugins}
        for name, module in self.plugins:
            if name not in present:
                registry.register(module, name=name)
        return registry


@dataclass(frozen=True)
class RunSpec:
    """What a call is for: the env, the policy when it runs in the worker, and env reuse.

    ``key`` identifies the spec (one per run); ``policy`` is ``None`` when the policy
    runs on the driver and the worker only hosts envs.
    """

    key: str
    env: EnvSource
    policy: PolicySource | None
    reuse_envs: bool = True
    max_idle_envs: int = 16


class EnvPool:
    """Idle env instances of one run, keyed by task index, oldest closed first.

    ``acquire`` returns an idle instance of the task or builds a new one; ``release``
    puts a healthy instance back (or closes it when reuse is off or the pool is full).
    An instance whose episode failed or was cut off is closed, never reused.
    """

    def __init__(self, resolved: ResolvedEnv, *, reuse: bool, max_idle: int) -> None:
        self.resolved = resolved
        self.reuse = reuse
        self.max_idle = max_idle
        self._idle: OrderedDict[int, list[AsyncEnv[Any, Any]]] = OrderedDict()
        self._idle_count = 0
        self.created = 0

    async def acquire(self, task_index: int) -> AsyncEnv[Any, Any]:
        idle = self._idle.get(task_index)
        if idle:
            self._idle_count -= 1
            environment = idle.pop()
            if not idle:
                del self._idle[task_index]
            return environment
        environment = self.resolved.make_task(task_index)
        if inspect.isawaitable(environment):
            environment = await environment
        self.created += 1
        return adapt_env(environment)  # tagged when built; the adapter keeps the tags

    async def release(self, task_index: int, environment: AsyncEnv[Any, Any], *, healthy: bool) -> None:
        if not (self.reuse and healthy and self.max_idle > 0):
            await aclose_env(environment)
            return
        self._idle.setdefault(task_index, []).append(environment)
        self._idle.move_to_end(task_index)
        self._idle_count += 1
        # Bookkeeping first, closing after: other episodes acquire and release meanwhile.
        evicted = []
        while self._idle_count > self.max_idle:
            oldest_task, instances = next(iter(self._idle.items()))
            evicted.append(instances.pop(0))
            self._idle_count -= 1
            if not instances:
                del self._idle[oldest_task]
        for instance in evicted:
            await aclose_env(instance)

    async def close(self) -> None:
        instances = [environment for group in self._idle.values() for environment in group]
        self._idle.clear()
        self._idle_count = 0
        for environment in instances:
            try:
                await aclose_env(environment)
            except Exception:  # noqa: BLE001 - closing the rest matters more than one bad close()
                pass


class _RunState:
    """What a worker keeps for one :class:`RunSpec`."""

    def __init__(self, spec: RunSpec, registry: Any) -> None:
        self.spec = spec
        self.resolved = resolve_env(spec.env, registry)
        self.policy = resolve_policy(spec.policy, registry).policy if spec.policy is not None else None
        self.pool = EnvPool(self.resolved, reuse=spec.reuse_envs, max_idle=spec.max_idle_envs)


class RolloutWorker:
    """One worker process: env instances, episodes, and (optionally) the policy.

    Args:
        slots: episodes this worker runs at once (more calls wait inside the worker).
        registry: what this worker's registry mirrors of the driver's (plugins added with
            ``Registry.register`` must be importable on the worker's node).
        plugin_variables: the driver's ``ROLLOUTGYM_PLUGINS``/``ROLLOUTGYM_DISABLE_PLUGINS``.
    """

    def __init__(
        self,
        slots: int,
        registry: RegistryMirror | None = None,
        plugin_variables: Mapping[str, str] | None = None,
    ) -> None:
        for name in PLUGIN_VARIABLES:
            os.environ.pop(name, None)
        os.environ.update(plugin_variables or {})
        self.registry = (registry or RegistryMirror()).build()
        self.slots = max(1, slots)
        self._semaphore: asyncio.Semaphore | None = None
        self._runs: dict[str, _RunState] = {}
        self._leases: dict[int, tuple[str, int, AsyncEnv[Any, Any]]] = {}
        self._lease_ids = itertools.count()

    # -- bookkeeping ------------------------------------------------------------------

    def _state(self, spec: RunSpec) -> _RunState:
        state = self._runs.get(spec.key)
        if state is None:
            state = self._runs[spec.key] = _RunState(spec, self.registry)
        return state

    def _slots(self) -> asyncio.Semaphore:
        # Created lazily: it must belong to the actor's event loop.
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.slots)
        return self._semaphore

    async def prepare(self, spec: RunSpec) -> dict[str, Any]:
        """Resolve the env (and build the policy) now, so a bad setup fails before any rollout."""
        state = self._state(spec)
        return {"pid": os.getpid(), "tasks": len(state.resolved.tasks), "env_id": state.resolved.env_id}

    async def finish(self, key: str | None) -> int:
        """Close the idle envs of a finished run (``None``: of every run); returns how many envs they built."""
        keys = list(self._runs) if key is None else [key]
        created = 0
        for name in keys:
            state = self._runs.pop(name, None)
            if state is not None:
                await state.pool.close()
                created += state.pool.created
        return created

    async def pid(self) -> int:
        return os.getpid()

    # -- actor-side policies: whole members ------------------------------------------

    async def run_members(self, spec: RunSpec, work: Sequence[tuple[GroupJob, int]]) -> list[Trajectory | RolloutError]:
        """Run ``(job, member)`` episodes here, at most ``slots`` at once (the policy runs in this worker).

        Returns one outcome per entry, in order: a trajectory or the member's error record.
        """
        state = self._state(spec)
        return list(await asyncio.gather(*(self._run_member(state, job, member) for job, member in work)))

    async def _run_member(self, state: _RunState, job: GroupJob, member: int) -> Trajectory | RolloutError:
        async with self._slots():
            pool = state.pool

            async def release(environment: AsyncEnv[Any, Any], healthy: bool) -> None:
                try:
                    await asyncio.shield(pool.release(job.task_index, environment, healthy=healthy))
                except Exception:  # noqa: BLE001 - a failing close() must not lose the episode
                    pass

            return await run_job_member(job, member, job.task_index, pool.acquire, state.policy, release=release)

    # -- driver-side policies: env leases ----------------------------------------------

    async def open_env(
        self, spec: RunSpec, task_index: int, reset: tuple[int | None, dict[str, Any] | None] | None = None
    ) -> tuple[int, dict[str, Any], Any]:
        """Lease an env instance of a task; returns the lease id, what the driver needs of it,
        and, when ``reset=(seed, options)`` is given, the outcome of that first ``reset``
        (its result, or the exception it raised) to save the driver a round trip.
        """
        state = self._state(spec)
        environment = await state.pool.acquire(task_index)
        lease = next(self._lease_ids)
        self._leases[lease] = (spec.key, task_index, environment)
        description = {
            "action_space": environment.action_space,
            "observation_space": environment.observation_space,
            "tools": find_attribute(environment, "tools"),
            "rolloutgym_task_id": find_attribute(environment, "rolloutgym_task_id"),
            "rolloutgym_env_id": find_attribute(environment, "rolloutgym_env_id"),
        }
        outcome: Any = None
        if reset is not None:
            try:
                outcome = await environment.reset(seed=reset[0], options=reset[1])
            except Exception as exc:  # raised on the driver by its reset(), where the engine expects it
                outcome = exc
        return lease, description, outcome

    def _leased(self, lease: int) -> AsyncEnv[Any, Any]:
        try:
            return self._leases[lease][2]
        except KeyError:
            raise RuntimeError(f"env lease {lease} is not open on this worker (closed already?)") from None

    async def reset_env(self, lease: int, seed: int | None, options: dict[str, Any] | None) -> Any:
        return await self._leased(lease).reset(seed=seed, options=options)

    async def step_env(self, lease: int, action: Any) -> tuple[Any, bool]:
        """Step a leased env; returns ``(result, released)``.

        The instance goes back to the pool as soon as a step ends the episode (``released``
        is then true and the driver sends no ``release_env``), saving a round trip.
        """
        result = await self._leased(lease).step(action)
        finished = type(result) is tuple and len(result) == 5 and (result[2] is True or result[3] is True)
        if finished:
            await self.release_env(lease, True)
        return result, finished

    async def release_env(self, lease: int, healthy: bool) -> None:
        entry = self._leases.pop(lease, None)
        if entry is None:
            return
        key, task_index, environment = entry
        state = self._runs.get(key)
        if state is None:
            await aclose_env(environment)
        else:
            await state.pool.release(task_index, environment, healthy=healthy)
