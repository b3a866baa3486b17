"""The browser service: one background event loop that owns Playwright, the pooled
Chromium and the site servers of the ``chromium`` backend.

Playwright objects belong to the event loop that created them. Episodes run on whatever
loop the caller has (``asyncio.run`` per test, one loop per ``rolloutgym run``), so the
browser lives on its own loop in a daemon thread and episodes ``await`` work submitted
to it. Cancelling the awaiting task cancels the work. The service stops at interpreter
exit, or with :func:`shutdown_browser`.

No call waits forever: each has a deadline (:data:`CALL_DEADLINE_S`). Playwright's own timeouts
cover actions and navigations, but not every request (``evaluate``, ``new_context``,
``context.close``), and a browser that stops answering without its pipe closing would leave
such a call, and the episode awaiting it, waiting with nothing to wake it. When a deadline
passes, the pooled browser is abandoned (its processes killed) so the next episode gets a new
one, and the call raises :class:`~rolloutgym_browser._backend.BrowserError` (an env error).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["CALL_DEADLINE_S", "BrowserService", "get_service", "shutdown_browser"]

T = TypeVar("T")

CALL_DEADLINE_S = 90.0
"""The longest one call to the browser service may take (Playwright's action timeout is 15 s;
a launch under heavy load takes a few seconds)."""


class BrowserService:
    """A daemon thread running an event loop; :meth:`call` runs coroutines on it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.pool: Any = None  # the BrowserPool, created lazily on the service loop

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=serve, name="rolloutgym-browser", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    @property
    def running(self) -> bool:
        return self._loop is not None

    async def call(
        self, coroutine: Coroutine[Any, Any, T], *, what: str = "working", deadline: float | None = None
    ) -> T:
        """Run ``coroutine`` on the service loop and await its result from any loop.

        Raises:
            BrowserError: when the call takes longer than ``deadline`` seconds (the browser is
                abandoned first, so the next episode starts a new one).
        """
        loop = self._ensure_loop()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        guarded = self._within(coroutine, what, CALL_DEADLINE_S if deadline is None else deadline)
        if running is loop:
            return await guarded
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(guarded, loop))

    async def _within(self, coroutine: Coroutine[Any, Any, T], what: str, deadline: float) -> T:
        """``coroutine`` with a deadline, on the service loop."""
        limit = asyncio.timeout(deadline)
        try:
            async with limit:
                return await coroutine
        except TimeoutError:
            if not limit.expired():
                raise
            pool = self.pool
            if pool is not None:
                await pool.abandon()
            from ._backend import BrowserError

            raise BrowserError(
                f"Chromium did not answer within {deadline:.0f} s while {what}; the browser was stopped. This episode "
                "is recorded as an environment error and the next one starts a new browser."
            ) from None

    def call_blocking(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run ``coroutine`` on the service loop from a thread that has no running loop."""
        loop = self._ensure_loop()
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(timeout)

    def shutdown(self, timeout: float = 30.0) -> None:
        """Close the pooled browser and Playwright, then stop the thread. Safe to call twice."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        pool, self.pool = self.pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(pool.close(), loop).result(timeout)

        async def drain() -> None:
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(drain(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()


_SERVICE = BrowserService()


def get_service() -> BrowserService:
    """The process-wide browser service."""
    return _SERVICE


def shutdown_browser() -> None:
    """Close the pooled Chromium, Playwright and the service thread (they restart on demand)."""
    _SERVICE.shutdown()


atexit.register(shutdown_browser)
