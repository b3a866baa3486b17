"""One WebSocket per event loop and server, shared by every ``AsyncRemoteEnv`` session on it.

The many-sessions protocol of ``/ws`` (see ``_websocket.py``): each request carries an
``"id"``, answers come back with it, in any order. The connection is driven by the
sans-I/O ``websockets.ClientProtocol`` under an ``asyncio.Protocol``: an answer resolves
its caller's future straight from ``data_received`` (no reader task, no receive queue),
and requests made in the same turn of the event loop leave as one frame (a JSON array),
in one write, as the server's answers do.

A channel lives while sessions use it: the last session's ``close()`` closes it. If the
connection drops, every request in flight (and every later one on its sessions) fails
with :class:`RemoteEnvError`; the server has closed those sessions.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import weakref
from typing import Any

import msgspec
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from ._codec import loads
from ._errors import RemoteEnvError, Unauthorized

__all__ = ["Channel", "acquire_channel"]

# Requests whose content is strict JSON data (what ``to_jsonable`` gives: string keys, finite
# floats, 64-bit ints, no lone surrogates) are written by msgspec: ~10x faster than json.dumps,
# the same JSON values (UTF-8 text instead of \u escapes).
_STRICT_ENCODER = msgspec.json.Encoder()


def _encode(message: dict[str, Any], strict: bool) -> bytes:
    if strict:
        try:
            return _STRICT_ENCODER.encode(message)
        except (TypeError, ValueError):  # not strict after all (a lone surrogate): json.dumps escapes it
            pass
    return json.dumps(message, default=_embedded).encode()


def _embedded(value: Any) -> Any:
    """A ``msgspec.Raw`` (JSON written before, e.g. a step's action) for ``json.dumps``."""
    if isinstance(value, msgspec.Raw):
        return json.loads(bytes(value))
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_CHANNELS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Channel]] = (
    weakref.WeakKeyDictionary()
)


async def acquire_channel(url: str, headers: dict[str, str], timeout: float) -> Channel:
    """The open channel of this event loop to ``url`` (``ws://HOST:PORT/ws``), connecting it if needed.

    Each call counts one user; :meth:`Channel.release` undoes it.
    """
    loop = asyncio.get_running_loop()
    channels = _CHANNELS.setdefault(loop, {})
    key = (url, tuple(sorted(headers.items())))
    channel = channels.get(key)
    if channel is None or channel.failure is not None:
        channel = Channel(url, headers, timeout, loop)
        channels[key] = channel
        channel.connecting = loop.create_task(channel.connect())
    channel.users += 1
    try:
        await asyncio.shield(channel.connecting)  # type: ignore[arg-type]
    except BaseException:
        channel.release()
        raise
    return channel


class _Protocol(asyncio.Protocol):
    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def data_received(self, data: bytes) -> None:
        self.channel.received(data)

    def eof_received(self) -> bool | None:
        self.channel.protocol.receive_eof()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.channel.lost(exc)


class Channel:
    """A WebSocket carrying many sessions' requests (create it with :func:`acquire_channel`)."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float, loop: asyncio.AbstractEventLoop) -> None:
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.loop = loop
        self.uri = parse_uri(url)
        self.protocol = ClientProtocol(self.uri, max_size=None)
        # id -> (the caller's future, its deadline); in the order the requests were sent
        self.pending: dict[int, tuple[asyncio.Future[dict[str, Any]], float]] = {}
        self.expiry: asyncio.TimerHandle | None = None  # _expire() at the oldest pending deadline
        self.ids = itertools.count(1)
        self.users = 0
        self.transport: asyncio.Transport | None = None
        self.handshake: asyncio.Future[None] = loop.create_future()
        self.connecting: asyncio.Task[None] | None = None
        self.failure: RemoteEnvError | None = None
        self.fragments: list[bytes] = []
        self.outbox: list[bytes] = []

    async def connect(self) -> None:
        import ssl

        context = ssl.create_default_context() if self.uri.secure else None
        try:
            transport, _ = await asyncio.wait_for(
                self.loop.create_connection(lambda: _Protocol(self), self.uri.host, self.uri.port, ssl=context),
                self.timeout,
            )
            self.transport = transport  # type: ignore[assignment]
            request = self.protocol.connect()
            request.headers.update(self.headers)
            self.protocol.send_request(request)
            self.flush()
            await asyncio.wait_for(asyncio.shield(self.handshake), self.timeout)
        except (OSError, TimeoutError, RemoteEnvError) as exc:
            self.fail(exc)
            raise self.failure from None  # type: ignore[misc]

    # -- requests ---------------------------------------------------------------------

    async def request(self, message: dict[str, Any], strict: bool = False) -> dict[str, Any]:
        """Send ``message`` (an ``"id"`` is added) and wait for its answer.

        ``strict``: the message holds strict JSON data only (see ``_STRICT_ENCODER``); any
        other message is written by ``json.dumps``, with its usual errors.
        """
        if self.failure is not None:
            raise self.failure
        identifier = next(self.ids)
        message["id"] = identifier
        self.outbox.append(_encode(message, strict))
        loop = self.loop
        future = loop.create_future()
        pending = self.pending
        deadline = loop.time() + self.timeout
        pending[identifier] = (future, deadline)
        if self.expiry is None:
            self.expiry = loop.call_at(deadline, self._expire)
        if len(self.outbox) == 1:
            if len(pending) == 1:  # nothing else in flight: it leaves now (a lone request waits for nobody)
                self.send_outbox()
            else:  # requests made in this turn of the loop leave together, in one frame
                loop.call_soon(self.send_outbox)
        try:
            return await future
        finally:
            pending.pop(identifier, None)

    def _expire(self) -> None:
        """Fail the requests past their deadline; one timer for all (deadlines come in the order of the ids)."""
        self.expiry = None
        now = self.loop.time()
        expired = []
        for identifier, (_, deadline) in self.pending.items():
            if deadline > now:
                self.expiry = self.loop.call_at(deadline, self._expire)
                break
            expired.append(identifier)
        for identifier in expired:
            future, _ = self.pending.pop(identifier)
            if not future.done():
                future.set_exception(
                    RemoteEnvError(f"no answer from the rolloutgym server at {self.url} within {self.timeout:g} s")
                )

    def send_outbox(self) -> None:
        """Send the requests made in this turn of the event loop: one frame (a JSON array when several)."""
        outbox, self.outbox = self.outbox, []
        if not outbox or self.failure is not None:
            return
        self.protocol.send_text(outbox[0] if len(outbox) == 1 else b"[" + b",".join(outbox) + b"]")
        self.flush()

    def flush(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(self.protocol.data_to_send()))

    def release(self) -> None:
        """One user fewer; the last one closes the connection."""
        self.users -= 1
        if self.users > 0:
            return
        channels = _CHANNELS.get(self.loop, {})
        for key, channel in list(channels.items()):
            if channel is self:
                del channels[key]
        if self.expiry is not None:
            self.expiry.cancel()
            self.expiry = None
        if self.failure is None:
            self.failure = RemoteEnvError(f"the connection to {self.url} was closed")
            if self.transport is not None and not self.transport.is_closing():
                self.protocol.send_close()
                self.flush()
                self.transport.close()

    # -- the connection ---------------------------------------------------------------

    def received(self, data: bytes) -> None:
        self.protocol.receive_data(data)
        for event in self.protocol.events_received():
            if isinstance(event, Frame):
                self.frame(event)
            elif isinstance(event, Response) and not self.handshake.done():
                if self.protocol.handshake_exc is not None:
                    self.failure = self.refused(event)
                    self.handshake.set_exception(self.failure)
                else:
                    self.handshake.set_result(None)
        self.flush()  # pongs and closing handshakes
        if self.protocol.close_expected() and self.transport is not None:
            self.transport.close()

    def refused(self, response: Response) -> RemoteEnvError:
        if response.status_code in (401, 403) and self.protocol.handshake_exc is not None:
            return Unauthorized(
                f"the rolloutgym server at {self.url} refused the WebSocket ({response.status_code}): "
                "missing or wrong bearer token; pass token=... or set ROLLOUTGYM_SERVE_TOKEN"
            )
        return RemoteEnvError(
            f"the rolloutgym server at {self.url} refused the WebSocket: {self.protocol.handshake_exc}"
        )

    def frame(self, frame: Frame) -> None:
        if frame.opcode not in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
            return  # ping, pong, close: the protocol answers them
        self.fragments.append(bytes(frame.data))
        if not frame.fin:
            return
        raw = b"".join(self.fragments)
        self.fragments = []
        try:
            message = loads(raw)
        except (ValueError, RecursionError):
            return  # not an answer of ours
        pending = self.pending
        for answer in message if type(message) is list else (message,):
            entry = pending.pop(answer.get("id"), None) if type(answer) is dict else None
            if entry is not None and not entry[0].done():
                entry[0].set_result(answer)

    def lost(self, exc: BaseException | None) -> None:
        self.fail(exc)

    def fail(self, exc: BaseException | None) -> None:
        if self.failure is None and isinstance(exc, RemoteEnvError):
            self.failure = exc
        elif self.failure is None:
            detail = f"{type(exc).__name__}: {exc}" if exc is not None else "the connection was closed"
            self.failure = RemoteEnvError(
                f"lost the connection to the rolloutgym server at {self.url} ({detail}); its sessions were "
                "closed there. Is 'rolloutgym serve' running?"
            )
        if not self.handshake.done():
            self.handshake.set_exception(self.failure)
            self.handshake.exception()  # retrieved: nobody may be waiting any more
        pending, self.pending = self.pending, {}
        if self.expiry is not None:
            self.expiry.cancel()
            self.expiry = None
        for future, _ in pending.values():
            if not future.done():
                future.set_exception(self.failure)
        channels = _CHANNELS.get(self.loop, {})
        for key, channel in list(channels.items()):
            if channel is self:
                del channels[key]
        if self.transport is not None:
            self.transport.close()
