"""The model calls of a batch run: each wave of prompts in one call (or each turn on its own).

:class:`Waves` waits until every still-active sample has asked for its next turn, then sends
their prompts to the :class:`~rolloutgym.llm.BatchSampler` in one call, in sample order;
:class:`FreeRunning` sends each turn as soon as it is ready. A sample's episode sees its
seat in them as a per-request sampler (:class:`WaveSlot`).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from rolloutgym_protocol.errors import PolicyError

from .generation import BatchSampler
from .sampling import Sample, SamplingParams

__all__ = ["FreeRunning", "WaveSlot", "Waves"]


class Waves:
    """Collects the sampling requests of active samples and sends each wave in one call."""

    def __init__(self, sampler: BatchSampler, active: int) -> None:
        self.sampler = sampler
        self.active = active
        self.pending: list[tuple[int, tuple[int, ...], SamplingParams, asyncio.Future[Sample]]] = []
        self.sizes: list[int] = []
        self.seconds = 0.0
        self.failure: PolicyError | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._coroutine = inspect.iscoroutinefunction(getattr(sampler, "generate", None))

    async def request(self, index: int, prompt: Sequence[int], params: SamplingParams) -> Sample:
        if self.failure is not None:
            raise self.failure
        future: asyncio.Future[Sample] = asyncio.get_running_loop().create_future()
        self.pending.append((index, tuple(prompt), params, future))
        self._flush_if_complete()
        return await future

    def finish(self) -> None:
        """A sample left the batch (finished or failed)."""
        self.active -= 1
        self._flush_if_complete()

    def _flush_if_complete(self) -> None:
        if self.pending and len(self.pending) >= self.active:
            items = sorted(self.pending, key=itemgetter(0))
            self.pending = []
            task = asyncio.get_running_loop().create_task(self._generate(items))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _call(self, prompts: list[tuple[int, ...]], params: list[SamplingParams]) -> Any:
        if self._coroutine:
            return await self.sampler.generate(prompts, params)
        result = await asyncio.to_thread(self.sampler.generate, prompts, params)
        return await result if inspect.isawaitable(result) else result

    async def _generate(self, items: list[tuple[int, tuple[int, ...], SamplingParams, asyncio.Future[Sample]]]) -> None:
        wave = len(self.sizes)
        self.sizes.append(len(items))
        prompts = [item[1] for item in items]
        params = [item[2] for item in items]
        started = time.perf_counter()
        try:
            samples = list(await self._call(prompts, params))
            if len(samples) != len(items):
                raise PolicyError(f"generate() returned {len(samples)} samples for {len(items)} prompts")
            for sample in samples:
                if not isinstance(sample, Sample):
                    raise PolicyError(
                        f"generate() must return rolloutgym.llm.Sample objects, got {type(sample).__name__}"
                    )
        except Exception as exc:
            name = type(self.sampler).__name__
            self.failure = PolicyError(
                f"the generation backend {name} failed in wave {wave} ({len(items)} prompts): "
                f"{type(exc).__name__}: {exc}"
            )
            self.failure.__cause__ = exc
            for *_, future in items:
                if not future.done():
                    future.set_exception(self.failure)
            return
        finally:
            self.seconds += time.perf_counter() - started
        for (*_, future), sample in zip(items, samples, strict=True):
            if not future.done():
                future.set_result(sample)


class FreeRunning(Waves):
    """Each sample's turn is sent on its own as soon as it is ready (no wave barrier).

    A coroutine backend gets the requests concurrently (continuous batching is its job);
    a plain method runs one request at a time in a worker thread.
    """

    def __init__(self, sampler: BatchSampler, active: int) -> None:
        super().__init__(sampler, active)
        self._lock = asyncio.Lock()

    async def request(self, index: int, prompt: Sequence[int], params: SamplingParams) -> Sample:
        if self.failure is not None:
            raise self.failure
        future: asyncio.Future[Sample] = asyncio.get_running_loop().create_future()
        if self._coroutine:
            await self._generate([(index, tuple(prompt), params, future)])
        else:
            async with self._lock:
                await self._generate([(index, tuple(prompt), params, future)])
        return await future

    def finish(self) -> None:
        self.active -= 1


class WaveSlot:
    """The per-request :class:`Sampler` one sample's episode sees: a seat in the waves."""

    __slots__ = ("index", "waves")

    def __init__(self, waves: Waves, index: int) -> None:
        self.waves = waves
        self.index = index

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        return await self.waves.request(self.index, prompt_token_ids, params)
