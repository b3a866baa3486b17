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
  hands finished groups to the trainer, with one of three ways of keeping staleness bounded
  (``staleness=``):

  - ``"pace"`` (default): admission is paced so that nothing goes stale. A group starts only
    while every group started and not yet handed out would still be at most
    ``max_staleness`` versions behind when the trainer gets it, given that the trainer
    updates once per ``groups_per_update`` groups it gets. Slow groups hold new admissions
    back instead of being overtaken and thrown away.
  - ``"mask"``: every group is handed out; a stale one has its ``loss_mask`` zeroed (its
    tokens train nothing) and keeps its rewards, so a group baseline still counts it.
  - ``"drop"``: a stale group is dropped and counted (``queue.dropped_stale``). Dropping
    starves slow, hard problems (their groups are the ones that go stale), so it is not the
    default.

  ``queue.stats`` counts what the mode did (groups handed out, fresh, masked, dropped,
  paced waits, the largest lag); each handed-out batch's ``metrics["staleness"]`` says its
  lag, whether it was masked, and the mode, for the trainer's log.
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

__all__ = ["STALENESS_MODES", "RolloutQueue", "VersionedSampler", "token_policy_versions", "trajectory_versions"]

STALENESS_MODES = ("pace", "mask", "drop")
"""How a :class:`RolloutQueue` keeps staleness bounded (module docstring)."""


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
    admitted: int  # the policy version when the group started

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
        max_queued: finished groups waiting at most: no group starts while this many wait.
        staleness: ``"pace"`` (default), ``"mask"`` or ``"drop"`` (module docstring).
        groups_per_update: with ``"pace"``, the groups the trainer gets per weight update.
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
        staleness: str = "pace",
        groups_per_update: int = 1,
        **options: Any,
    ) -> None:
        if max_staleness < 0 or max_queued < 1 or concurrency < 1 or groups_per_update < 1:
            raise ConfigError("max_staleness must be >= 0, max_queued, concurrency and groups_per_update >= 1")
        if staleness not in STALENESS_MODES:
            raise ConfigError(f"staleness={staleness!r}: use one of {', '.join(STALENESS_MODES)} (default pace)")
        if "max_seq_len" not in options:
            raise ConfigError("RolloutQueue needs max_seq_len= (passed to arun_multi_turn_rollout)")
        self.sampler = sampler
        self.groups = iter(groups)
        self.task_to_env = task_to_env
        self.max_staleness = max_staleness
        self.options = options
        # Unbounded, in finish order: the producer waits *before* starting a group while max_queued
        # finished ones wait (a bounded put would let a later group overtake a blocked one, leaving it stale).
        self.queue: asyncio.Queue[_RolledBatch | None] = asyncio.Queue()
        self.max_queued = max_queued
        self.concurrency = concurrency
        self.mode = staleness
        self.groups_per_update = groups_per_update
        self.dropped_stale = 0
        self.stats: dict[str, Any] = {
            "mode": staleness,
            "handed_out": 0,
            "fresh": 0,
            "masked_stale": 0,
            "dropped_stale": 0,
            "paced_waits": 0,
            "max_lag": 0,
        }
        self._workers: list[asyncio.Task[None]] = []
        self._admitted = 0  # groups started
        self._open: list[int] = []  # start versions of the groups started and not yet handed out or dropped
        self._first_version = sampler.version

    def _may_start(self) -> bool:
        """``pace``: whether one more group may start without any open group going stale (module docstring)."""
        oldest = min(self._open, default=self.sampler.version) - self._first_version
        return self._admitted + 1 <= (oldest + self.max_staleness + 1) * self.groups_per_update

    async def _admit(self) -> int:
        """Wait (``pace``) until a group may start; returns the version it starts at."""
        if self.mode == "pace" and not self._may_start():
            self.stats["paced_waits"] += 1
            while not self._may_start():
                await asyncio.sleep(0.005)
        self._admitted += 1
        self._open.append(self.sampler.version)
        return self.sampler.version

    async def _produce(self) -> None:
        from .batch import arun_multi_turn_rollout

        while True:
            while self.queue.qsize() >= self.max_queued:
                await asyncio.sleep(0.005)
            version = await self._admit()
            samples = next(self.groups, None)
            if samples is None:
                self._admitted -= 1
                self._open.remove(version)
                return
            batch, _ = await arun_multi_turn_rollout(
                self.sampler, list(samples), self.task_to_env, free_running=True, **self.options
            )
            self.queue.put_nowait(_RolledBatch(list(samples), batch, version))

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
        """The next group's ``RolloutBatch`` (``None`` when every group is done): a fresh one, or with
        ``staleness="mask"`` (or a ``pace`` bound the trainer's updates outran) a stale one with its
        ``loss_mask`` zeroed; ``"drop"`` skips stale ones."""
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
            self._open.remove(group.admitted)
            oldest = group.oldest_version
            lag = 0 if oldest is None else self.sampler.version - oldest
            self.stats["max_lag"] = max(self.stats["max_lag"], lag)
            if lag <= self.max_staleness:
                self.stats["fresh"] += 1
                self.stats["handed_out"] += 1
                return _stamped(group.batch, lag, masked=False, mode=self.mode)
            if self.mode == "drop":
                self.dropped_stale += 1
                self.stats["dropped_stale"] += 1
                continue
            self.stats["masked_stale"] += 1
            self.stats["handed_out"] += 1
            return _stamped(group.batch, lag, masked=True, mode=self.mode)
        return None

    async def __aiter__(self) -> AsyncIterator[Any]:
        while (batch := await self.get()) is not None:
            yield batch


def _stamped(batch: Any, lag: int, *, masked: bool, mode: str) -> Any:
    """``batch`` with ``metrics["staleness"]``; masked: every ``loss_mask`` row zeroed (rewards kept)."""
    columns = batch.columns
    if masked:
        columns = {**columns, "loss_mask": [[0] * len(row) for row in columns["loss_mask"]]}
    metrics = {**batch.metrics, "staleness": {"lag": lag, "masked": masked, "mode": mode}}
    return dataclasses.replace(batch, columns=columns, metrics=metrics)
