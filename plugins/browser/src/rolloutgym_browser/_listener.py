"""Accept TCP connections on 127.0.0.1 and own every accepted socket until it is closed.

Why not ``asyncio.start_server``: on CPython 3.11, a connection the kernel accepted just
before ``Server.close()`` gets its transport built a loop turn later, when
``Server._attach`` asserts that the server still listens; the assertion is swallowed (logged
only in asyncio debug mode) and the accepted socket is left to the garbage collector, an
"unclosed socket" ResourceWarning (a browser's pooled context opens keep-alive sockets at
any moment, so this happened in the chromium reliability test). Why not an accept task on
``loop.sock_accept`` either: cancelling that task in the loop turn after the kernel handed
over a socket raises ``CancelledError`` at the ``await`` and drops the accepted socket the
same way (seen in CI). Here a reader callback accepts every pending socket synchronously
and records it before anything can be cancelled; each socket's handler task closes it, and
:meth:`LoopbackListener.close` closes whatever a handler never got to.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable

__all__ = ["ConnectionHandler", "LoopbackListener"]

ConnectionHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class LoopbackListener:
    """Serves ``handle(reader, writer)`` per connection on an ephemeral 127.0.0.1 port.

    The handler need not close the writer (the listener does when it returns). :meth:`close`
    stops accepting, closes every open connection's socket (its handler then reads end of
    file and returns) and waits for the handlers; call both methods on the same loop.
    """

    def __init__(self, handle: ConnectionHandler, *, backlog: int = 128) -> None:
        self._handle = handle
        self._backlog = backlog
        self._socket: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        # Every accepted socket until its handler has finished with it.
        self._sockets: dict[asyncio.Task[None], socket.socket] = {}
        self._writers: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self._guard: asyncio.Task[None] | None = None
        self.port: int | None = None

    @property
    def listening(self) -> bool:
        return self._socket is not None

    async def start(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.bind(("127.0.0.1", 0))
            listener.listen(self._backlog)
            listener.setblocking(False)
        except BaseException:
            listener.close()
            raise
        loop = asyncio.get_running_loop()
        loop.add_reader(listener.fileno(), self._accept_pending, listener)
        self._socket, self._loop = listener, loop
        self.port = listener.getsockname()[1]
        self._guard = loop.create_task(self._close_with_loop())

    async def _close_with_loop(self) -> None:
        # A loop shutting down without close() (asyncio.run cancels every task) still closes
        # the listening socket.
        try:
            await asyncio.Event().wait()
        finally:
            self._stop_listening()

    def _stop_listening(self) -> None:
        self._closing = True
        listener, self._socket = self._socket, None
        if listener is not None:
            assert self._loop is not None
            self._loop.remove_reader(listener.fileno())
            listener.close()

    def _accept_pending(self, listener: socket.socket) -> None:
        # A reader callback: runs in one loop step, so no socket is ever between the kernel
        # and a record of it when close() runs.
        assert self._loop is not None
        while not self._closing:
            try:
                connection, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # e.g. out of file descriptors: try again on the next wake-up
                return
            connection.setblocking(False)
            task = self._loop.create_task(self._serve(connection))
            self._sockets[task] = connection

    async def _serve(self, connection: socket.socket) -> None:
        task = asyncio.current_task()
        try:
            reader, writer = await asyncio.open_connection(sock=connection)
        except OSError:  # the peer went away before it was wrapped
            self._sockets.pop(task, None)  # type: ignore[arg-type]
            connection.close()
            return
        self._writers[task] = writer  # type: ignore[index]
        try:
            if not self._closing:
                await self._handle(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(BaseException):
                await writer.wait_closed()
            self._writers.pop(task, None)  # type: ignore[arg-type]
            self._sockets.pop(task, None)  # type: ignore[arg-type]
            connection.close()

    async def close(self, timeout: float = 2.0) -> None:
        """Stop listening and end every connection. Safe to call twice."""
        self._stop_listening()
        guard, self._guard = self._guard, None
        if guard is not None:
            guard.cancel()
        # Closing the transports ends each handler's reads normally; cancelling a handler task
        # instead makes asyncio log a spurious CancelledError.
        for writer in list(self._writers.values()):
            writer.close()
        tasks = list(self._sockets)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=timeout)
        # A handler cancelled before its first step never ran its own cleanup.
        for connection in list(self._sockets.values()):
            connection.close()
        self._sockets.clear()
        self._writers.clear()
