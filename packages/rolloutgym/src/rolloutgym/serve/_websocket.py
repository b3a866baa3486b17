"""The ``/ws`` endpoint: sessions stepped over one WebSocket connection.

Two ways to use a connection (both answered in JSON text frames):

* **one session** (the first protocol, any WebSocket client): messages without an
  ``"id"``: ``{"op": "open", "env": ...}`` then ``reset``/``step``/``call``/``close`` on
  that session, answered one by one, in order.
* **many sessions** (what :class:`~rolloutgym.serve.AsyncRemoteEnv` does): every message
  carries an ``"id"`` (any JSON value) and every op but ``open`` names its
  ``"session"``; each answer repeats the ``"id"``. Messages run concurrently (one at a
  time per session), so a thousand sessions can share one connection: no TCP and HTTP
  handshake per session. Requests may also come as a JSON array of such messages, and
  answers that are ready together leave as one JSON array: one frame, one write.

Every session opened or attached on a connection closes when the connection does. A
connection acts for the credentials it was opened with (see ``_access.py``): it reaches
only their sessions.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from rolloutgym_protocol.errors import json_error_text

from ._codec import dumps_text, loads
from ._eager import start_eagerly
from ._errors import RequestTooLarge, error_body, status_for

__all__ = ["WebSocketConnection", "parse_json"]

logger = logging.getLogger("rolloutgym.serve")

# Requests answered eagerly on sessions of sync envs (see WebSocketConnection.start).
_EAGER_OPS = frozenset({"reset", "step", "call"})


def parse_json(raw: str | bytes, what: str) -> Any:
    """``json.loads`` with a 400-class error for bad or absurdly nested JSON."""
    try:
        return loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} is not valid JSON: {exc}") from None
    except ValueError as exc:  # a number past Python's int-to-text limit
        raise ValueError(f"{what} is not valid JSON: {json_error_text(exc)}") from None
    except RecursionError:
        raise ValueError(f"{what} is nested too deeply to parse") from None


def _error_reply(exc: BaseException) -> dict[str, Any]:
    status = status_for(exc)
    if status >= 500:
        logger.warning("env error", extra={"event": "error", "error": f"{type(exc).__name__}: {exc}"}, exc_info=exc)
    return {"ok": False, "status": status, **error_body(exc)}


class WebSocketConnection:
    """One accepted ``/ws`` connection of a server (``server`` is the app's ``_Server``)."""

    def __init__(self, server: Any, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.server = server
        self.manager = server.manager
        self.receive = receive  # the ASGI callables (no Starlette WebSocket: two layers fewer per message)
        self.send_message = send
        self.owner: str = scope["rolloutgym.owner"]
        self.session_id: str | None = None  # the one-session protocol's session
        self.owned: set[str] = set()  # sessions of the many-sessions protocol
        self.tasks: set[asyncio.Task[None]] = set()  # answers that are waiting (see start())
        self.running = 0  # answers started and not yet sent (eager ones included)
        self.outbox: list[dict[str, Any]] = []
        self.loop = asyncio.get_running_loop()

    async def run(self) -> None:
        """Accept the connection, answer messages until the client disconnects; then close its sessions."""
        receive = self.receive
        if (await receive())["type"] != "websocket.connect":
            return
        await self.send_message({"type": "websocket.accept"})
        try:
            while True:
                event = await receive()
                if event["type"] != "websocket.receive":
                    break  # websocket.disconnect
                raw = event.get("text")
                if raw is None:
                    raw = event.get("bytes") or b""
                message, error = self.parse(raw)
                if error is None and self.many(message):
                    if type(message) is dict:
                        self.start(message)
                        continue
                    self.running += 1  # the array's answers wait for each other: one frame for all
                    try:
                        for request in message:
                            self.start(request)
                    finally:
                        self.running -= 1
                    continue
                reply = await self.one_session(message, error)
                try:
                    await self.send(reply)
                except Exception:  # noqa: BLE001 - the client is gone
                    break
        finally:
            await self.shutdown()

    def start(self, request: dict[str, Any]) -> None:
        """Answer ``request`` concurrently with the others: at once, or in a task once it has to wait.

        A sync env's call that runs on the event loop never waits (see ``_quick_calls.py``), so
        its answer is sent before the next request is read; one in a worker thread waits, and a
        task takes the answer over then (``_eager.py``). Opens, closes and async envs' requests
        start in tasks of their own (an async env may tie itself to the task it runs in).
        """
        operation, session_id = request.get("op"), request.get("session")
        eager = type(operation) is str and operation in _EAGER_OPS and type(session_id) is str
        session = self.manager.sessions.get(session_id) if eager else None
        if session is not None and not session.asynchronous:
            task = start_eagerly(self.loop, self.answer(request))
            if task is None:
                return
        else:
            task = self.loop.create_task(self.answer(request))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    @staticmethod
    def many(message: Any) -> bool:
        """Whether ``message`` is a request of the many-sessions protocol (or a list of them)."""
        if type(message) is dict:
            return "id" in message
        return type(message) is list and bool(message) and all(type(item) is dict and "id" in item for item in message)

    def parse(self, raw: str | bytes) -> tuple[Any, BaseException | None]:
        limit = self.server.config.max_body_bytes
        if len(raw) > limit:
            return None, RequestTooLarge(
                f"message of {len(raw)} characters is over this server's limit of {limit} bytes"
            )
        try:
            return parse_json(raw, "message"), None
        except ValueError as exc:
            return None, exc

    async def send(self, reply: dict[str, Any]) -> None:
        await self.send_message({"type": "websocket.send", "text": dumps_text(reply)})

    async def shutdown(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        sessions = [*self.owned, *([self.session_id] if self.session_id is not None else [])]
        self.owned.clear()
        self.session_id = None
        for session_id in sessions:
            await self.manager.close(session_id, self.owner)

    # -- many sessions ----------------------------------------------------------------

    async def answer(self, message: dict[str, Any]) -> None:
        """Answer one request of the many-sessions protocol (``running`` counts it until it is sent).

        One coroutine from the request to the write (every layer is a coroutine on every step).
        """
        self.running += 1
        try:
            identifier = message.get("id")
            try:
                operation = message.get("op")
                if type(operation) is str and operation in _EAGER_OPS:  # the hot path: straight to the session's call
                    session_id = message.get("session")
                    if session_id is None:
                        raise ValueError(
                            'a message with an "id" names its "session" (or is {"op": "open", "env": ...})'
                        )
                    if operation == "step" and "action" in message:
                        result = await self.manager.step(
                            session_id, message["action"], prefetch=message.get("prefetch"), owner=self.owner
                        )
                    else:
                        result = await self.server.dispatch(session_id, operation, message, self.owner)
                else:
                    result = await self.many_sessions(message)
                reply = {"id": identifier, "ok": True, "result": result}
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every error is an answer; the connection stays up
                reply = {"id": identifier, **_error_reply(exc)}
            # Answers that are ready in the same turn of the event loop leave as one frame (a
            # JSON array): one write and one system call for all of them.
            outbox = self.outbox
            outbox.append(reply)
            if len(outbox) > 1:
                return  # the first answer sends this one too
            if self.running > 1:  # others in flight may finish in this turn: send after it, with them
                await asyncio.sleep(0)
            # (alone, it leaves now: a turn of the loop is an epoll call and ~20 µs of a sequential client's step)
            outbox, self.outbox = self.outbox, []
            text = dumps_text(outbox[0]) if len(outbox) == 1 else "[" + ",".join(map(dumps_text, outbox)) + "]"
            try:
                await self.send_message({"type": "websocket.send", "text": text})
            except Exception:  # noqa: BLE001 - the client is gone; run() closes the sessions
                pass
        finally:
            self.running -= 1

    async def many_sessions(self, message: dict[str, Any]) -> Any:
        operation = message.get("op")
        if operation == "open":
            result = await self.server.open(message, "ws", self.owner)
            self.owned.add(result["session"])
            return result
        session_id = message.get("session")
        if operation == "attach":
            session = self.manager.get(session_id, self.owner)
            session.transport = "ws"
            self.owned.add(session.id)
            return {"session": session.id}
        if operation == "close":
            self.manager.get(session_id, self.owner)  # unknown or someone else's: 404
            self.owned.discard(session_id)
            return {"closed": await self.manager.close(session_id, self.owner)}
        if session_id is None:
            raise ValueError('a message with an "id" names its "session" (or is {"op": "open", "env": ...})')
        return await self.server.dispatch(session_id, operation, message, self.owner)

    # -- one session ------------------------------------------------------------------

    async def one_session(self, message: Any, error: BaseException | None) -> dict[str, Any]:
        try:
            if error is not None:
                raise error
            if not isinstance(message, dict):
                raise ValueError("message must be a JSON object with an 'op'")
            return {"ok": True, "result": await self.one_session_op(message)}
        except Exception as exc:  # noqa: BLE001 - every error is an answer; the connection stays up
            return _error_reply(exc)

    async def one_session_op(self, message: dict[str, Any]) -> Any:
        operation = message.get("op")
        owner = self.owner
        if operation == "open":
            if self.session_id is not None:
                await self.manager.close(self.session_id, owner)
                self.session_id = None
            result = await self.server.open(message, "ws", owner)
            self.session_id = result["session"]
            return result
        if operation == "attach":
            session = self.manager.get(message.get("session"), owner)
            if self.session_id is not None and self.session_id != session.id:
                await self.manager.close(self.session_id, owner)
            session.transport = "ws"
            self.session_id = session.id
            return {"session": self.session_id}
        if operation == "close":
            closed = await self.manager.close(self.session_id, owner) if self.session_id else False
            self.session_id = None
            return {"closed": closed}
        if self.session_id is None:
            raise ValueError('no session on this connection: send {"op": "open", "env": ...} first')
        return await self.server.dispatch(self.session_id, operation, message, owner)
