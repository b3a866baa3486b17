"""The episode site's listener owns every socket the kernel accepts, whenever close() comes.

CI once saw an "unclosed socket" ResourceWarning when the listener was closed in the loop turn
after the kernel handed over a connection (the accept task was cancelled with the socket in
hand). These tests close the listener at each point of a connection's life: still in the
kernel's backlog, accepted but not yet wrapped, wrapped and mid-request, and idle keep-alive.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import warnings

import pytest
from rolloutgym_browser._listener import LoopbackListener


async def _echo_line(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while line := await reader.readline():
        writer.write(line)
        await writer.drain()


def _connect(port: int, count: int) -> list[socket.socket]:
    clients = []
    for _ in range(count):
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(b"ping\n")
        clients.append(client)
    return clients


async def _close_after(turns: int, count: int) -> list[str]:
    listener = LoopbackListener(_echo_line)
    await listener.start()
    assert listener.port is not None
    clients = _connect(listener.port, count)
    for _ in range(turns):
        await asyncio.sleep(0)
    await listener.close()
    await listener.close()  # safe twice
    assert not listener.listening
    for client in clients:
        client.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    return [str(warning.message) for warning in caught if issubclass(warning.category, ResourceWarning)]


@pytest.mark.parametrize("turns", [0, 1, 2, 3, 5, 8, 20])
def test_close_at_any_loop_turn_leaves_no_unclosed_socket(turns: int) -> None:
    assert asyncio.run(_close_after(turns, count=4)) == []


async def _close_in_the_accepting_loop_turn() -> list[str]:
    # Wake this coroutine in the same selector pass that sees the new connection, ahead of it:
    # close() then runs after the kernel handed the socket over and before anything else.
    loop = asyncio.get_running_loop()
    listener = LoopbackListener(_echo_line)
    await listener.start()
    assert listener.port is not None
    for _ in range(3):
        await asyncio.sleep(0)
    wake, poke = socket.socketpair()
    woken = loop.create_future()
    loop.add_reader(wake.fileno(), lambda: woken.done() or woken.set_result(None))
    poke.send(b"x")
    clients = _connect(listener.port, 1)
    await woken
    loop.remove_reader(wake.fileno())
    await listener.close()
    for sock in (*clients, wake, poke):
        sock.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    return [str(warning.message) for warning in caught if issubclass(warning.category, ResourceWarning)]


def test_close_in_the_loop_turn_that_accepted_a_connection_closes_it() -> None:
    for _ in range(5):
        assert asyncio.run(_close_in_the_accepting_loop_turn()) == []


def test_connections_are_served_and_ended_by_close() -> None:
    async def scenario() -> tuple[bytes, bytes]:
        listener = LoopbackListener(_echo_line)
        await listener.start()
        assert listener.port is not None
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(b"hello\n")
        echoed = await asyncio.wait_for(reader.readline(), 10)
        await listener.close()
        after = await asyncio.wait_for(reader.read(), 10)  # the server ended the connection
        writer.close()
        await writer.wait_closed()
        return echoed, after

    assert asyncio.run(scenario()) == (b"hello\n", b"")


def test_a_loop_shut_down_without_close_closes_the_listening_socket() -> None:
    ports: list[int] = []

    async def scenario() -> None:
        listener = LoopbackListener(_echo_line)
        await listener.start()
        assert listener.port is not None
        ports.append(listener.port)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(scenario())
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", ports[0]), timeout=5).close()
