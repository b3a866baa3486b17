"""Run a coroutine at once, and make it a task only if it has to wait (Python 3.11 has no eager tasks).

``/ws`` answers each request of the many-sessions protocol concurrently. A task per request
costs its creation, one more turn of the event loop (an epoll call) before it starts and a
done callback after; a step of an in-memory env never waits, so the answer can run and be
sent in the turn that received the request. :func:`start_eagerly` runs the coroutine until
it first waits; only then does a task take it over, so the connection goes on reading other
requests while this one waits (a lock, a worker thread).

While it runs eagerly, ``asyncio.current_task()`` is the caller's task: use it only for code
that does not tie itself to the current task before its first wait (``asyncio.timeout``,
task groups, anyio cancel scopes do); ``/ws`` uses it for sync envs' calls only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["start_eagerly"]


def start_eagerly(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
    """Run ``coroutine`` until it first waits, then hand it to a task (returned); ``None`` when it finished.

    An exception it raises before its first wait propagates here.
    """
    try:
        waiting_on = coroutine.send(None)
    except StopIteration:
        return None
    return loop.create_task(_Resumed(coroutine, waiting_on))


class _Resumed(Coroutine[Any, Any, None]):
    """A started coroutine as a task's coroutine: its first step gives the task what it already waits on.

    Every later step, a cancellation before the task's first step included, goes to the coroutine.
    """

    __slots__ = ("_coroutine", "_waiting_on")

    _STARTED = object()

    def __init__(self, coroutine: Coroutine[Any, Any, None], waiting_on: Any) -> None:
        self._coroutine = coroutine
        self._waiting_on = waiting_on

    def send(self, value: Any) -> Any:
        waiting_on = self._waiting_on
        if waiting_on is not self._STARTED:
            self._waiting_on = self._STARTED
            return waiting_on  # a future (its "blocking" flag set) or None (a bare yield): as the coroutine gave it
        return self._coroutine.send(value)

    def throw(self, *exception: Any) -> Any:  # type: ignore[override]
        self._waiting_on = self._STARTED
        return self._coroutine.throw(*exception)

    def close(self) -> None:
        self._coroutine.close()

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("a resumed coroutine is run by its task, not awaited")
