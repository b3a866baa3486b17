"""A small HTTP/1.1 server on 127.0.0.1: asyncio plus ``h11`` (httpx's own HTTP parser), in a thread.

It exists for tests and benchmarks. One event loop serves every connection, so thousands of
concurrent requests that only wait (scripted model latency) cost almost nothing, unlike a
thread per connection.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import h11

__all__ = ["HTTPHandler", "LocalHTTPServer"]

HTTPHandler = Callable[[str, str, bytes], Awaitable[tuple[int, dict[str, str], bytes]]]
"""``handler(method, path, body) -> (status, headers, body)``, awaited on the server's loop."""

_READ_SIZE = 65536


class LocalHTTPServer:
    """Serve ``handler`` on an ephemeral port of 127.0.0.1 from a background thread.

    ``port`` picks the port instead (e.g. a server that stopped, coming back at its old
    address).
    """

    def __init__(self, handler: HTTPHandler, *, port: int = 0) -> None:
        self._handler = handler
        self._requested_port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._connection, "127.0.0.1", self._requested_port, backlog=1024)
                )
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # reported to start()'s caller
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._shutdown())
                loop.close()

        self._thread = threading.Thread(target=serve, name="rolloutgym-local-http-server", daemon=True)
        self._thread.start()
        ready.wait(timeout=30)
        if failure:
            raise RuntimeError(f"the local test server could not start: {failure[0]}") from failure[0]

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._loop = self._thread = None

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        connection = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await self._read_request(connection, reader)
                if request is None:
                    return
                method, path, body = request
                status, headers, payload = await self._handler(method, path, body)
                response_headers = [("content-type", "application/json"), ("content-length", str(len(payload)))]
                response_headers += [(key, value) for key, value in headers.items()]
                data = connection.send(h11.Response(status_code=status, headers=response_headers))
                data += connection.send(h11.Data(data=payload)) + connection.send(h11.EndOfMessage())
                writer.write(data)
                await writer.drain()
                if connection.our_state is h11.MUST_CLOSE or connection.their_state is h11.MUST_CLOSE:
                    return
                connection.start_next_cycle()
        except (ConnectionError, h11.RemoteProtocolError, asyncio.IncompleteReadError):
            return  # the client went away or spoke garbage: drop the connection
        except asyncio.CancelledError:
            return
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, asyncio.CancelledError):
                pass
            self._connections.discard(task)  # last: _shutdown() must still await a task that is closing

    @staticmethod
    async def _read_request(connection: h11.Connection, reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
        method = path = ""
        body = bytearray()
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                chunk = await reader.read(_READ_SIZE)
                connection.receive_data(chunk)
                if not chunk and connection.their_state is h11.IDLE:
                    return None
                continue
            if isinstance(event, h11.Request):
                method, path = event.method.decode(), event.target.decode()
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return method, path, bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                return None
