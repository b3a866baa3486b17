"""The server's WebSocket protocol: uvicorn's sans-I/O one, pausing reads only once requests queue up.

uvicorn's protocol pauses the socket's reading after every message (two ``epoll_ctl`` calls
per message); ours keeps reading while fewer than ``PAUSE_AT`` messages wait for the app and
pauses, as uvicorn does, beyond that, resuming once the app has taken them all. Driven here
with uvicorn's real class on a recording transport (no socket needed to count the calls).
"""

from __future__ import annotations

import asyncio

import pytest

uvicorn = pytest.importorskip("uvicorn")

from rolloutgym.serve._ws_protocol import PAUSE_AT, websocket_protocol  # noqa: E402


class RecordingTransport:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def pause_reading(self) -> None:
        self.calls.append("pause")

    def resume_reading(self) -> None:
        self.calls.append("resume")


async def _app(scope, receive, send):  # pragma: no cover - never called here
    pass


def _protocol():
    from uvicorn.server import ServerState

    config = uvicorn.Config(_app, ws=websocket_protocol(), lifespan="off")
    config.load()
    protocol = config.ws_protocol_class(config=config, server_state=ServerState(), app_state={})
    protocol.transport = RecordingTransport()
    return protocol


def _message(protocol, text: str) -> None:
    protocol.frames = [text.encode()]
    protocol.curr_msg_data_type = "text"
    protocol.send_receive_event_to_app()


def test_the_installed_uvicorn_gets_the_queued_pause_protocol():
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    protocol = websocket_protocol()
    assert isinstance(protocol, type) and issubclass(protocol, WebSocketsSansIOProtocol)
    assert protocol is not WebSocketsSansIOProtocol


def test_messages_taken_as_they_come_never_pause_reading():
    async def scenario():
        protocol = _protocol()
        for index in range(100):
            _message(protocol, f"m{index}")
            assert (await protocol.receive())["text"] == f"m{index}"
        return protocol.transport.calls

    assert asyncio.run(scenario()) == []


def test_a_backlog_pauses_reading_and_draining_it_resumes():
    async def scenario():
        protocol = _protocol()
        for index in range(PAUSE_AT - 1):
            _message(protocol, f"m{index}")
        assert protocol.transport.calls == []  # fewer than PAUSE_AT waiting: still reading
        _message(protocol, "last")
        assert protocol.transport.calls == ["pause"]
        received = [(await protocol.receive())["text"] for _ in range(PAUSE_AT)]
        return received, protocol.transport.calls

    received, calls = asyncio.run(scenario())
    assert received == [f"m{index}" for index in range(PAUSE_AT - 1)] + ["last"]
    assert calls == ["pause", "resume"]  # resumed once the app had taken them all, as uvicorn does
