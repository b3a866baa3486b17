"""A small HTTP/1.1 server on 127.0.0.1 (ephemeral port) that serves a :class:`SiteApp`.

Built on asyncio streams and ``h11`` (the protocol state machine); it runs on the event
loop that drives Chromium. Every response says ``Cache-Control: no-store`` so the browser
always shows the site's current state.
"""

from __future__ import annotations

import asyncio
import weakref
from urllib.parse import parse_qsl

import h11

from ._html import render_html
from ._listener import LoopbackListener
from ._site import SiteApp

__all__ = ["SiteServer", "live_servers"]

_READ_SIZE = 65536
# h11's default (16 KB) would drop a GET form submission of long fields that the dom backend
# accepts; the env bounds every field, so 1 MB is never reached by a valid action.
_MAX_REQUEST_HEAD = 1024 * 1024
_LIVE: weakref.WeakSet[SiteServer] = weakref.WeakSet()


def live_servers() -> list[SiteServer]:
    """Episode servers started and not yet closed (for leak checks; the pool's own is not counted)."""
    return [server for server in _LIVE if server.listening and not server.internal]


class SiteServer:
    """Serves ``app`` (swap it with :attr:`app` between episodes) until :meth:`close`."""

    def __init__(self, app: SiteApp, *, internal: bool = False) -> None:
        self.app = app
        self.internal = internal
        self._listener: LoopbackListener | None = None

    @property
    def port(self) -> int | None:
        return None if self._listener is None else self._listener.port

    @property
    def listening(self) -> bool:
        return self._listener is not None and self._listener.listening

    @property
    def origin(self) -> str:
        if self.port is None:
            raise RuntimeError("the site server is not started")
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        listener = LoopbackListener(self._serve_connection)
        await listener.start()
        self._listener = listener
        _LIVE.add(self)

    async def close(self) -> None:
        """Stop listening and drop open connections. Safe to call twice."""
        if self._listener is not None:
            await self._listener.close()

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_REQUEST_HEAD)
        try:
            while True:
                request, body = await self._read_request(connection, reader)
                if request is None:
                    break
                status, headers, payload = self._respond(request, body)
                writer.write(connection.send(h11.Response(status_code=status, headers=headers)) or b"")
                writer.write(connection.send(h11.Data(data=payload)) or b"")
                writer.write(connection.send(h11.EndOfMessage()) or b"")
                await writer.drain()
                if connection.our_state is h11.MUST_CLOSE or connection.their_state is h11.MUST_CLOSE:
                    break
                connection.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError):
            pass  # the listener closes the connection
        except asyncio.CancelledError:
            pass  # the server is closing

    async def _read_request(
        self, connection: h11.Connection, reader: asyncio.StreamReader
    ) -> tuple[h11.Request | None, bytes]:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(_READ_SIZE)
                connection.receive_data(data)
                if not data and request is None:
                    return None, b""
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body.extend(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return request, bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                return None, b""

    def _respond(self, request: h11.Request, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        method = request.method.decode("ascii", "replace").upper()
        target = request.target.decode("utf-8", "replace")
        base = [("Cache-Control", "no-store"), ("Connection", "keep-alive")]
        if target.split("?", 1)[0] == "/favicon.ico":
            return 204, [*base, ("Content-Length", "0")], b""
        pairs = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True) if method == "POST" else []
        destination = next((value for name, value in request.headers if name == b"sec-fetch-dest"), b"document")
        document = destination in (b"document", b"iframe")
        response = self.app.handle("POST" if method == "POST" else "GET", target, pairs, document=document)
        if response.location is not None:
            return response.status, [*base, ("Location", response.location), ("Content-Length", "0")], b""
        assert response.page is not None
        payload = render_html(response.page).encode("utf-8")
        headers = [*base, ("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(payload)))]
        return response.status, headers, payload
