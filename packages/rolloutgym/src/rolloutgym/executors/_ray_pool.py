"""The driver's pool of Ray workers: start them, pick the least busy, replace the dead."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ray
from ray import exceptions as ray_exceptions
from rolloutgym_protocol.errors import RolloutGymError

from ._ray_worker import RegistryMirror, RolloutWorker

__all__ = ["WORKER_LOST", "WorkerPool", "WorkersLost"]

# What a call raises when its worker process (or node) went away rather than the code failing.
WORKER_LOST: tuple[type[BaseException], ...] = (
    ray_exceptions.RayActorError,
    ray_exceptions.WorkerCrashedError,
    ray_exceptions.NodeDiedError,
    ray_exceptions.ObjectLostError,
)


class WorkersLost(RolloutGymError, RuntimeError):
    """Every Ray worker of a run died and no replacement could be started."""


@dataclass(eq=False)
class Worker:
    """One worker actor and the work the driver has given it."""

    handle: Any
    number: int
    load: int = 0
    alive: bool = True


class WorkerPool:
    """A fixed number of :class:`RolloutWorker` actors; a dead one is replaced (a bounded number of times).

    Args:
        size: how many workers to keep.
        slots: episodes each worker runs at once.
        actor_options: ``ray.remote`` options for each worker (default ``num_cpus=1``).
        registry: what the workers' registries mirror of the driver's.
        max_replacements: how many dead workers may be replaced in the pool's lifetime
            (default ``max(4, 2 * size)``).
    """

    def __init__(
        self,
        *,
        size: int,
        slots: int,
        actor_options: Mapping[str, Any] | None = None,
        registry: RegistryMirror | None = None,
        plugin_variables: Mapping[str, str] | None = None,
        max_replacements: int | None = None,
    ) -> None:
        if size < 1:
            raise ValueError("a worker pool needs at least one worker")
        options = {"num_cpus": 1, "max_restarts": 0, **(actor_options or {})}
        self._actor_class = ray.remote(RolloutWorker).options(**options)
        self._arguments = (slots, registry or RegistryMirror(), dict(plugin_variables or {}))
        self.size = size
        self.slots = slots
        self.replacements_left = max_replacements if max_replacements is not None else max(4, 2 * size)
        self.replaced = 0
        self._numbers = itertools.count()
        self._rotation = itertools.count()
        self.workers: list[Worker] = [self._start() for _ in range(size)]

    def _start(self) -> Worker:
        return Worker(self._actor_class.remote(*self._arguments), next(self._numbers))

    @property
    def handles(self) -> list[Any]:
        """The live workers' actor handles."""
        return [worker.handle for worker in self.workers if worker.alive]

    def pick(self) -> Worker:
        """The live worker with the least work given to it (ties rotate)."""
        live = [worker for worker in self.workers if worker.alive]
        if not live:
            raise WorkersLost(
                f"every Ray worker died and the pool may not replace more (replaced {self.replaced}); "
                "check the worker logs (ray logs, or the dashboard) for why they exit, e.g. out of memory"
            )
        offset = next(self._rotation) % len(live)
        ordered = live[offset:] + live[:offset]
        return min(ordered, key=lambda worker: worker.load)

    def lost(self, worker: Worker) -> None:
        """Take a dead worker out of the pool and start a replacement if allowed."""
        if not worker.alive:
            return
        worker.alive = False
        try:
            ray.kill(worker.handle, no_restart=True)
        except Exception:  # noqa: BLE001 - it is already gone
            pass
        self.workers.remove(worker)
        if self.replacements_left > 0:
            self.replacements_left -= 1
            self.replaced += 1
            self.workers.append(self._start())

    async def finish(self, key: str | None, *, timeout: float = 30.0) -> int:
        """Close the idle envs of run ``key`` (``None``: of every run) on every live worker.

        Returns how many env instances those runs built, summed over the workers.
        """
        references = [worker.handle.finish.remote(key) for worker in self.workers if worker.alive]
        if not references:
            return 0
        try:
            results = await asyncio.wait_for(asyncio.gather(*references, return_exceptions=True), timeout)
        except TimeoutError:
            return 0
        created = 0
        for result in results:
            if isinstance(result, int):
                created += result
        return created

    def shutdown(self) -> None:
        """Kill every worker (their envs are closed by :meth:`finish` first)."""
        for worker in self.workers:
            if worker.alive:
                worker.alive = False
                try:
                    ray.kill(worker.handle, no_restart=True)
                except Exception:  # noqa: BLE001
                    pass
        self.workers.clear()
