"""Accept TCP connections on 127.0.0.1 and own every accepted socket until it is closed.

Why not ``asyncio.start_server``: on CPython 3.11, a connection the kernel accepted just
before ``Server.close()`` gets its transport built a loop turn later, when
``Server._attach`` asserts that the server still listens; the assertion is swallowed (logged
only in asyncio debug mode) and the accepted socket is left to the garbage collector, an
"unclosed socket" ResourceWarning (a browser's pooled context opens keep-alive sockets at
any moment, so this happened in the chromium reliability test). Here one accept task takes
each socket with ``loop.sock_accept``, wraps it in streams and starts its handler as a
tracked task in the same step, so :meth:`LoopbackListener.close` sees every connection.
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
        self._accepting: asyncio.Task[None] | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
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
        self._socket = listener
        self.port = listener.getsockname()[1]
        self._accepting = asyncio.get_running_loop().create_task(self._accept(listener))

    async def _accept(self, listener: socket.socket) -> None:
        # This task owns the listening socket: when it ends (close(), or a loop shutting down
        # that cancels every task) the socket is closed with it.
        loop = asyncio.get_running_loop()
        try:
            while True:
                connection, _ = await loop.sock_accept(listener)
                try:
                    reader, writer = await asyncio.open_connection(sock=connection)
                except asyncio.CancelledError:
                    connection.close()
                    raise
                except OSError:  # the peer went away before it was wrapped
                    connection.close()
                    continue
                task = loop.create_task(self._serve(reader, writer))
                self._connections[task] = writer
        finally:
            self._socket = None
            listener.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._handle(reader, writer)
        finally:
            self._connections.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
            writer.close()
            with contextlib.suppress(BaseException):
                await writer.wait_closed()

    async def close(self, timeout: float = 2.0) -> None:
        """Stop listening and end every connection. Safe to call twice."""
        listener, self._socket = self._socket, None
        accepting, self._accepting = self._accepting, None
        if accepting is not None:
            accepting.cancel()
            await asyncio.wait([accepting])
        if listener is not None:
            listener.close()
        # Closing the sockets ends each handler's reads normally; cancelling a handler task
        # instead makes asyncio log a spurious CancelledError.
        for writer in list(self._connections.values()):
            writer.close()
        if self._connections:
            _, pending = await asyncio.wait(list(self._connections), timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=timeout)
