"""Off-policy / asynchronous RL: policy versions on every token and a bounded-staleness queue.

Asynchronous trainers (the shape prime-rl, SkyRL and AReaL use) keep generating while they
train, so the weights change under rollouts in flight. Three pieces make that exact:

* :class:`VersionedSampler` wraps a generation backend (a ``BatchSampler`` or a
  ``TokenPolicy``) and stamps each sample with the policy version that produced it
  (``step.policy_info["sampler"]["policy_version"]``). :meth:`VersionedSampler.update`
  is the weight update: it waits for the model calls in flight, holds new ones while the
  trainer's update runs, then bumps the version. Episodes are not restarted: a partial
  rollout resumes on the new weights at its next turn, and its turns keep their versions.
* :func:`token_policy_versions` gives, aligned with ``trajectory_tokens(trajectory)``, the
  version of each sampled token (``None`` on prompt and env tokens).
* :class:`RolloutQueue` runs groups in the background through the async batch API and
  hands finished groups to the trainer; a group whose oldest token is more than
  ``max_staleness`` versions behind the current one is dropped (and counted).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from rolloutgym_protocol import Trajectory
from rolloutgym_protocol.errors import ConfigError

from .generation import as_batch_sampler
from .sampling import Sample, SamplingParams

__all__ = ["RolloutQueue", "VersionedSampler", "token_policy_versions", "trajectory_versions"]


class VersionedSampler:
    """A ``BatchSampler`` that tags every sample with the policy version that sampled it.

    Args:
        generation: a ``BatchSampler`` or ``TokenPolicy`` (e.g. ``rg.make_policy("hf:tiny")``).
        version: the starting version.
    """

    def __init__(self, generation: Any, *, version: int = 0) -> None:
        self.inner = as_batch_sampler(generation)
        self.renderer = self.inner.renderer
        self.version = version
        self.pad_token_id = getattr(self.inner, "pad_token_id", 0)
        self._open = asyncio.Event()
        self._open.set()
        self._in_flight = 0
        self._idle = asyncio.Condition()

    async def generate(self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]) -> list[Sample]:
        await self._open.wait()
        version = self.version
        self._in_flight += 1
        try:
            if inspect.iscoroutinefunction(self.inner.generate):
                result = await self.inner.generate(prompts, params)
            else:
                result = await asyncio.to_thread(self.inner.generate, prompts, params)
            samples = list(await result if inspect.isawaitable(result) else result)
        finally:
            self._in_flight -= 1
            async with self._idle:
                self._idle.notify_all()
        return [dataclasses.replace(s, info={**dict(s.info), "policy_version": version}) for s in samples]

    async def update(self, apply: Callable[[], Any] | None = None, *, version: int | None = None) -> int:
        """The weight update: wait for calls in flight, run ``apply()`` (sync or async) while
        new calls wait, then set the version (default: the next one). Returns it."""
        self._open.clear()
        try:
            async with self._idle:
                await self._idle.wait_for(lambda: self._in_flight == 0)
            if apply is not None:
                outcome = apply()
                if inspect.isawaitable(outcome):
                    await outcome
            self.version = self.version + 1 if version is None else int(version)
        finally:
            self._open.set()
        return self.version


def trajectory_versions(trajectory: Trajectory) -> list[int | None]:
    """The policy version of each step's sample (``None`` where nothing was sampled)."""
    versions: list[int | None] = []
    for step in trajectory.steps:
        sampler_info = (step.policy_info or {}).get("sampler") or {}
        versions.append(sampler_info.get("policy_version") if step.policy_tokens else None)
    return versions


def token_policy_versions(trajectory: Trajectory) -> list[int | None]:
    """Per token of ``trajectory_tokens(trajectory)``: the version that sampled it, or ``None``."""
    tags: list[int | None] = []
    for step, version in zip(trajectory.steps, trajectory_versions(trajectory), strict=True):
        tags.extend([None] * len(step.observation_tokens or ()))
        tags.extend([version] * len(step.policy_tokens or ()))
    return tags


@dataclasses.dataclass(frozen=True)
class _RolledBatch:
    """One rolled-out batch of the off-policy queue: its samples and their RolloutBatch."""

    samples: list[Mapping[str, Any]]
    batch: Any

    @property
    def oldest_version(self) -> int | None:
        versions = [
            version
            for trajectory in self.batch.trajectories
            if trajectory is not None
            for version in trajectory_versions(trajectory)
            if version is not None
        ]
        return min(versions) if versions else None


class RolloutQueue:
    """Groups rolled out in the background, pulled by the trainer with bounded staleness.

    Args:
        sampler: the :class:`VersionedSampler` the trainer updates.
        groups: an iterable of groups, each a list of samples (``task_name`` + ``task``).
        task_to_env: as for ``arun_multi_turn_rollout``.
        max_staleness: the most versions a group's oldest token may lag the current one.
        max_queued: finished groups held at most (the producer waits beyond it).
        options: passed to ``arun_multi_turn_rollout`` (``max_seq_len`` is required).
    """

    def __init__(
        self,
        sampler: VersionedSampler,
        groups: Iterable[Sequence[Mapping[str, Any]]],
        task_to_env: Mapping[str, Any],
        *,
        max_staleness: int = 1,
        max_queued: int = 4,
        concurrency: int = 2,
        **options: Any,
    ) -> None:
        if max_staleness < 0 or max_queued < 1 or concurrency < 1:
            raise ConfigError("max_staleness must be >= 0, max_queued and concurrency >= 1")
        if "max_seq_len" not in options:
            raise ConfigError("RolloutQueue needs max_seq_len= (passed to arun_multi_turn_rollout)")
        self.sampler = sampler
        self.groups = iter(groups)
        self.task_to_env = task_to_env
        self.max_staleness = max_staleness
        self.options = options
        self.queue: asyncio.Queue[_RolledBatch | None] = asyncio.Queue(max_queued)
        self.concurrency = concurrency
        self.dropped_stale = 0
        self._workers: list[asyncio.Task[None]] = []

    async def _produce(self) -> None:
        from .batch import arun_multi_turn_rollout

        for samples in self.groups:
            batch, _ = await arun_multi_turn_rollout(
                self.sampler, list(samples), self.task_to_env, free_running=True, **self.options
            )
            await self.queue.put(_RolledBatch(list(samples), batch))

    async def __aenter__(self) -> RolloutQueue:
        self._workers = [asyncio.create_task(self._produce()) for _ in range(self.concurrency)]
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        for worker in self._workers:
            worker.cancel()
        for worker in self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await worker

    def _done(self) -> bool:
        return all(worker.done() for worker in self._workers) and self.queue.empty()

    async def get(self) -> Any | None:
        """The next fresh enough group's ``RolloutBatch`` (``None`` when every group is done)."""
        while not self._done():
            getter: Awaitable[_RolledBatch | None] = self.queue.get()
            try:
                group = await asyncio.wait_for(getter, 0.05)
            except TimeoutError:
                for worker in self._workers:
                    if worker.done() and worker.exception() is not None:
                        raise worker.exception() from None  # type: ignore[misc]
                continue
            if group is None:
                continue
            oldest = group.oldest_version
            if oldest is not None and self.sampler.version - oldest > self.max_staleness:
                self.dropped_stale += 1
                continue
            return group.batch
        return None

    async def __aiter__(self) -> AsyncIterator[Any]:
        while (batch := await self.get()) is not None:
            yield batch
