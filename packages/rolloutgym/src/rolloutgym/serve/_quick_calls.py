"""How a served sync env's calls run: in worker threads, or on the event loop once they prove quick.

:class:`QuickCallsInline` is ``as_async`` for a served sync env; :class:`Quickness` is the
measure of call durations it keeps, shared by the sessions of one served env.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from gymnasium.utils import seeding
from rolloutgym_protocol.adapters import AsyncFromSync
from rolloutgym_protocol.envs import validate_step_result

__all__ = ["QuickCallsInline", "Quickness"]


class Quickness:
    """How long a served env's calls take in worker threads: shared by its sessions (see :class:`QuickCallsInline`)."""

    __slots__ = ("average", "samples", "disabled")

    def __init__(self) -> None:
        self.average = 0.0  # exponentially weighted mean of call durations, seconds
        self.samples = 0
        self.disabled = False

    def add(self, seconds: float) -> None:
        self.average = seconds if not self.samples else 0.8 * self.average + 0.2 * seconds
        self.samples += 1


class QuickCallsInline(AsyncFromSync[Any, Any]):
    """``as_async`` for a served sync env, plus: calls that prove quick run on the event loop.

    A worker-thread hop costs tens of microseconds of CPU and, on a busy machine, a
    scheduler wake-up or two; an in-memory env's step costs less than that. So once
    ``QUICK_SAMPLES`` calls have run in worker threads and the running mean of their
    durations is under ``QUICK_SECONDS``, calls run inline; the first inline call that takes longer than
    ``SLOW_SECONDS`` sends them back to worker threads for good. The measure is shared by
    the sessions of one served env (``quickness``), so short episodes benefit too and one
    slow call ends inlining for that env. Envs marked ``metadata["nonblocking"]`` are
    inline from the start, as everywhere.
    """

    QUICK_SECONDS = 200e-6
    QUICK_SAMPLES = 3
    SLOW_SECONDS = 2e-3

    def __init__(self, env: Any, quickness: Quickness | None = None) -> None:
        super().__init__(env)
        self._quickness = quickness if quickness is not None else Quickness()
        self._unseeded: int | None = None  # reset's seed, until this adapter's own np_random is read

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        # AsyncFromSync.reset seeds this adapter's own np_random (a SeedSequence and a Generator,
        # ~7 µs) before the env's reset; the server never reads it, so it is seeded when first read.
        if seed is not None:
            self._unseeded = seed
        return await self._run(self.env.reset, seed=seed, options=options)

    def _seed_now(self) -> None:
        if self._unseeded is not None:
            self._np_random, self._np_random_seed = seeding.np_random(self._unseeded)
            self._unseeded = None

    @property
    def np_random(self) -> Any:
        self._seed_now()
        return AsyncFromSync.np_random.fget(self)  # type: ignore[attr-defined]

    @np_random.setter
    def np_random(self, value: Any) -> None:
        self._unseeded = None
        AsyncFromSync.np_random.fset(self, value)  # type: ignore[attr-defined]

    @property
    def np_random_seed(self) -> int:
        self._seed_now()
        return AsyncFromSync.np_random_seed.fget(self)  # type: ignore[attr-defined,no-any-return]

    def _quick(self) -> bool:
        quickness = self._quickness
        return (
            not quickness.disabled
            and quickness.samples >= self.QUICK_SAMPLES
            and quickness.average < self.QUICK_SECONDS
        )

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        # AsyncFromSync.step without its _run coroutine when the call runs here and now.
        if not (self._closed or self._inline) and self._quick() and self._call_lock.acquire(blocking=False):
            result = self._quick_call(self.env.step, action)
        else:
            result = await self._run(self.env.step, action)
        return validate_step_result(result, env=self.env)

    def _quick_call(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a call on the event loop (the call lock is held: released here), timed."""
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            self._call_lock.release()
            elapsed = time.perf_counter() - started
            self._quickness.add(elapsed)
            if elapsed > self.SLOW_SECONDS:
                self._quickness.disabled = True

    async def _run(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        if self._closed or self._inline:
            return await super()._run(function, *args, **kwargs)
        if self._quick() and self._call_lock.acquire(blocking=False):
            return self._quick_call(function, *args, **kwargs)
        timing: list[float] = []
        result = await asyncio.to_thread(self._timed, timing, function, *args, **kwargs)
        if timing:
            self._quickness.add(timing[0])
        return result

    def _timed(self, timing: list[float], function: Any, *args: Any, **kwargs: Any) -> Any:
        # Wall time in the worker thread, waiting for the GIL included: with many sessions
        # busy at once the calls read as slow and stay in threads (measured: at 1,000
        # concurrent sessions inlining cost more server CPU than the thread hops it saved).
        started = time.perf_counter()
        try:
            return self._locked(function, *args, **kwargs)
        finally:
            timing.append(time.perf_counter() - started)

    async def close(self) -> None:
        if not self._closed and self._quick() and self._call_lock.acquire(blocking=False):
            self._closed = True
            try:
                self.env.close()
            finally:
                self._call_lock.release()
            return
        await super().close()
