"""The Ray executor: rollouts on a Ray cluster (``pip install 'rolloutgym[ray]'``).

``rolloutgym run ENV --executor ray [--ray-address auto]`` or, from Python::

    from rolloutgym.executors.ray import RayExecutor

    result = rg.run("toy/arith-v0", policy="oracle", executor=RayExecutor(address="auto"))

How it works:

* **Workers.** The executor starts ``num_workers`` actors (:class:`RolloutWorker`, one CPU
  each by default; one per available CPU of the cluster unless told otherwise). Each worker resolves
  the run's env source once, through a registry that mirrors the driver's (the same plugins must
  be installed on every node; a registry without entry points stays without them there) and
  keeps a bounded pool of idle env instances per task: members of a group that run on the
  same worker reuse an instance (``reset`` between episodes) instead of building a new one.
  An instance whose episode raised or timed out is closed, never reused; pass
  ``reuse_envs=False`` for envs whose instances must not outlive one episode.
* **Where the policy runs** (``policy_placement``). ``"actor"``: each worker builds the
  policy from its reference (``--policy``) and runs whole episodes; the right place for the
  env-aware built-ins ``oracle``/``null``/``random`` and for local models on worker GPUs.
  ``"driver"``: the policy object of the driver (an API client, ``human``, ``replay``) drives
  episodes whose env instances live in the workers; each ``reset``/``step`` is a call to the
  worker. ``"auto"`` (default) picks ``"actor"`` for ``oracle``, ``null`` and ``random`` and
  ``"driver"`` for everything else.
* **Backpressure.** At most ``max_in_flight`` members (default ``2 * concurrency``) are
  submitted at once; each worker runs at most ``ceil(concurrency / num_workers)`` episodes
  at a time and queues the rest, so memory stays bounded for runs of any size. With
  worker-side policies, members travel in batches of one worker's slots (consecutive
  members of one group or of several small groups): one Ray call per batch.
* **Streaming.** ``on_group`` is called on the driver as soon as a group's last member is
  back, so the run file grows while the run is going, in completion order.
* **Worker loss.** When a worker dies (killed, out of memory, node lost) the members it was
  running are run again once on another worker (a replacement is started), and their
  group is marked ``metadata["retried"] = True``. A member whose retry is lost too is
  recorded as a ``RolloutError`` of type ``WorkerLost``. No member is lost or reported twice:
  a member's result is only taken from the call that returned it.
"""

from __future__ import annotations

import asyncio
import math
import os
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import ray
from rolloutgym_protocol.errors import ConfigError

from ..sources import PolicySource, ResolvedEnv, ResolvedPolicy  # noqa: F401 - PolicySource in placement()
from ._ray_leased_env import result_of
from ._ray_members import RunGroups, run_in_workers, run_on_driver
from ._ray_pool import WORKER_LOST, WorkerPool, WorkersLost
from ._ray_worker import PLUGIN_VARIABLES, RegistryMirror, RolloutWorker, RunSpec
from .base import Executor, GroupJob, OnGroup

__all__ = ["ACTOR_SIDE_POLICIES", "RayExecutor", "RolloutWorker", "WorkersLost"]

PolicyPlacement = Literal["auto", "actor", "driver"]

# Env-aware built-in policies: they call the env (oracle_action, null_action, action_space).
ACTOR_SIDE_POLICIES = frozenset({"oracle", "null", "random", "chaos"})


def _unwrap_group_failure(failure: BaseExceptionGroup[Any]) -> BaseException:
    first: BaseException = failure
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


class RayExecutor(Executor):
    """Runs a run's members on Ray workers (see the module docstring for the semantics).

    Args:
        address: the Ray cluster (``"auto"``, ``"ray://host:10001"``); ``None`` connects to
            the Ray instance this process already started, or starts a local one.
        registry: the registry whose plugins the workers mirror (default: the one the run's
            env was resolved with). Plugins added to it with ``Registry.register`` are
            registered on the workers too (their modules must be importable there); a
            registry built without entry points or core plugins is mirrored without them.
        num_workers: worker actors to start (default: the cluster's available CPUs divided by
            the CPUs one worker asks for; never more than the run's concurrency or members).
        policy_placement: ``"auto"``, ``"actor"`` or ``"driver"`` (see the module docstring).
        reuse_envs: keep env instances in the workers and reset them for the next episode.
        max_idle_envs: idle env instances a worker keeps per run (oldest closed first).
        max_in_flight: members submitted but not finished at once (default ``2 * concurrency``).
        actor_options: ``ray.remote`` options for the workers, e.g. ``{"num_cpus": 2}``,
            ``{"num_gpus": 1}`` or ``{"runtime_env": {...}}``.
        init_options: keyword arguments for ``ray.init`` when this executor starts Ray.
        keep_workers: keep the workers (and the Ray instance) between runs until
            :meth:`close`; for trainers that call the executor once per step.
        max_replacements: dead workers that may be replaced per pool (default ``max(4, 2 * workers)``).
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        registry: Any = None,
        num_workers: int | None = None,
        policy_placement: PolicyPlacement = "auto",
        reuse_envs: bool = True,
        max_idle_envs: int = 16,
        max_in_flight: int | None = None,
        actor_options: Mapping[str, Any] | None = None,
        init_options: Mapping[str, Any] | None = None,
        keep_workers: bool = False,
        max_replacements: int | None = None,
    ) -> None:
        if policy_placement not in ("auto", "actor", "driver"):
            raise ConfigError(f"policy_placement must be 'auto', 'actor' or 'driver', got {policy_placement!r}")
        if num_workers is not None and num_workers < 1:
            raise ConfigError(f"num_workers must be at least 1, got {num_workers}")
        if max_in_flight is not None and max_in_flight < 1:
            raise ConfigError(f"max_in_flight must be at least 1, got {max_in_flight}")
        self.address = address
        self.registry = registry
        self.num_workers = num_workers
        self.policy_placement = policy_placement
        self.reuse_envs = reuse_envs
        self.max_idle_envs = max_idle_envs
        self.max_in_flight = max_in_flight
        self.actor_options = dict(actor_options or {})
        self.init_options = dict(init_options or {})
        self.keep_workers = keep_workers
        self.max_replacements = max_replacements
        self.pool: WorkerPool | None = None
        self._started_ray = False

    # -- setup ------------------------------------------------------------------------

    def placement(self, policy: PolicySource) -> Literal["actor", "driver"]:
        """Where ``policy`` runs under this executor's ``policy_placement``."""
        if self.policy_placement != "auto":
            return self.policy_placement
        provider = policy.reference.partition(":")[0]
        return "actor" if provider in ACTOR_SIDE_POLICIES else "driver"

    def _ensure_ray(self) -> None:
        if ray.is_initialized():
            return
        options = {"address": self.address, **self.init_options}
        try:
            ray.init(**options)
        except ConnectionError as exc:
            raise ConfigError(
                f"cannot connect to the Ray cluster at {self.address!r}: {exc}. Start it with 'ray start --head' "
                "(or check --ray-address), or leave --ray-address out to start a local Ray instance"
            ) from None
        self._started_ray = True

    def _mirror(self, registry: Any) -> RegistryMirror:
        registry = self.registry if self.registry is not None else registry
        if registry is None:
            return RegistryMirror()
        plugins = [
            (info.name, info.module)
            for info in registry.plugins
            if info.distribution is None and info.module is not None and info.status == "loaded"
        ]
        return RegistryMirror(registry.load_entry_points, registry.core, plugins)

    def _default_workers(self) -> int:
        cpus_per_worker = float(self.actor_options.get("num_cpus", 1) or 0)
        # Available, not total: on a shared cluster more workers would only wait for CPUs.
        cpus = float(ray.available_resources().get("CPU", 1))
        if cpus_per_worker <= 0:
            return max(1, int(cpus))
        return max(1, int(cpus // cpus_per_worker))

    def _get_pool(self, concurrency: int, members: int, mirror: RegistryMirror) -> WorkerPool:
        if self.pool is not None:
            return self.pool
        size = self.num_workers or min(self._default_workers(), concurrency, members)
        plugin_variables = {name: os.environ[name] for name in PLUGIN_VARIABLES if name in os.environ}
        self.pool = WorkerPool(
            size=size,
            slots=max(1, math.ceil(concurrency / size)),
            actor_options=self.actor_options,
            registry=mirror,
            plugin_variables=plugin_variables,
            max_replacements=self.max_replacements,
        )
        return self.pool

    async def _prepare(self, pool: WorkerPool, spec: RunSpec) -> None:
        """Resolve the env (and policy) on every worker before any rollout: a bad setup fails fast."""
        while True:
            workers = [worker for worker in pool.workers if worker.alive]
            if not workers:
                pool.pick()  # raises WorkersLost
            results = await asyncio.gather(
                *(result_of(worker.handle.prepare.remote(spec)) for worker in workers), return_exceptions=True
            )
            lost = False
            for worker, result in zip(workers, results, strict=True):
                if isinstance(result, WORKER_LOST):
                    pool.lost(worker)
                    lost = True
                elif isinstance(result, BaseException):
                    what = f"env {spec.env.reference!r}" + (
                        f" with policy {spec.policy.reference!r}" if spec.policy else ""
                    )
                    raise ConfigError(
                        f"a Ray worker could not set up {what}: {type(result).__name__}: {result}. Every node needs "
                        "the same rolloutgym plugins (and env files) as the driver"
                    ) from result
            if not lost:
                return

    # -- running ----------------------------------------------------------------------

    async def run(
        self,
        env: ResolvedEnv,
        policy: ResolvedPolicy,
        jobs: Sequence[GroupJob],
        *,
        concurrency: int,
        on_group: OnGroup,
    ) -> None:
        """Run every job on the Ray workers; ``on_group`` is called on the driver per finished group.

        With ``"actor"`` placement the workers build the policy from ``policy.source`` (the
        driver's policy object is not shipped); with ``"driver"`` placement
        ``policy.policy`` drives the episodes.
        """
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if env.env_source is None:
            raise ConfigError(
                f"the ray executor needs an env that can be resolved again in its workers; {env.env_id} has no source"
            )
        placement = self.placement(policy.source)
        total = sum(job.num_rollouts for job in jobs)
        if total == 0:
            return
        self._ensure_ray()
        pool = self._get_pool(concurrency, total, self._mirror(env.registry))
        spec = RunSpec(
            uuid.uuid4().hex,
            env.env_source,
            policy.source if placement == "actor" else None,
            self.reuse_envs,
            self.max_idle_envs,
        )
        groups = RunGroups(jobs, env.tasks, on_group)
        limit = self.max_in_flight or 2 * concurrency
        try:
            await self._prepare(pool, spec)
            if placement == "actor":
                await run_in_workers(pool, spec, jobs, groups, max(limit, pool.slots))
            else:
                await run_on_driver(pool, spec, jobs, groups, policy.policy, env.tasks, concurrency)
        except BaseExceptionGroup as failure:
            raise _unwrap_group_failure(failure) from None
        finally:
            if self.keep_workers:
                await pool.finish(spec.key)
            else:
                await self.aclose()

    # -- lifecycle --------------------------------------------------------------------

    @property
    def workers(self) -> list[Any]:
        """The live workers' actor handles (empty between runs unless ``keep_workers``)."""
        return self.pool.handles if self.pool is not None else []

    async def aclose(self) -> None:
        """Close the workers' envs, kill the workers, and stop Ray if this executor started it."""
        pool, self.pool = self.pool, None
        if pool is not None:
            try:
                await pool.finish(None)
            finally:
                pool.shutdown()
        if self._started_ray:
            self._started_ray = False
            ray.shutdown()

    def close(self) -> None:
        """Synchronous :meth:`aclose` (call it outside a running event loop)."""
        asyncio.run(self.aclose())
