"""uvicorn's sans-I/O WebSocket protocol, with reading paused only once requests queue up.

uvicorn's ``WebSocketsSansIOProtocol`` pauses the socket's reading after every message it
hands the app and resumes it when the app takes that message: two ``epoll_ctl`` system
calls, and the Python around them, on every message. ``/ws`` takes each request as soon as
it arrives (a step of a sync env is answered before the next one is read), so the queue is
empty almost always. :class:`QueuedPauseProtocol` pauses reading only when ``PAUSE_AT``
messages wait (the flow control a slow app still needs: a client cannot fill the server's
memory), and resumes it, as uvicorn does, once the app has taken them all.

It changes one method of uvicorn's class and reads two of its attributes; an uvicorn whose
class lacks them gets its own protocol (``"websockets-sansio"``), unchanged.
"""

from __future__ import annotations

from typing import Any

__all__ = ["websocket_protocol"]

PAUSE_AT = 16


def websocket_protocol() -> Any:
    """What ``uvicorn.Config(ws=...)`` gets: :class:`QueuedPauseProtocol`, or uvicorn's own where it cannot be made."""
    protocol = _queued_pause_protocol()
    return protocol if protocol is not None else "websockets-sansio"


def _queued_pause_protocol() -> Any:
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # pragma: no cover - an uvicorn without the sans-I/O protocol
        return None
    if not callable(getattr(WebSocketsSansIOProtocol, "send_receive_event_to_app", None)):
        return None  # pragma: no cover - another uvicorn: its own protocol, unchanged

    class QueuedPauseProtocol(WebSocketsSansIOProtocol):  # type: ignore[misc]
        """``WebSocketsSansIOProtocol`` that pauses reading only when ``PAUSE_AT`` messages wait for the app."""

        def send_receive_event_to_app(self) -> None:
            queue = getattr(self, "queue", None)
            if getattr(self, "read_paused", True) or queue is None or queue.qsize() >= PAUSE_AT - 1:
                super().send_receive_event_to_app()  # uvicorn's own: queue it and pause reading
                return
            self.read_paused = True  # read by the base class as "already paused": it queues without pausing
            try:
                super().send_receive_event_to_app()
            finally:
                self.read_paused = False

    return QueuedPauseProtocol
