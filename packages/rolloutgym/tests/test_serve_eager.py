"""``/ws`` answers without a task when they need no wait, and the client channel's one timer for its requests.

``start_eagerly`` is checked on plain coroutines; the server and the channel on real
``rolloutgym serve`` processes and a real silent WebSocket server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from rolloutgym.serve import RemoteEnvError, ServerProcess
from rolloutgym.serve._channel import acquire_channel
from rolloutgym.serve._eager import start_eagerly

GUESS = "toy/guess-v0"


def test_a_coroutine_that_never_waits_runs_at_once_without_a_task() -> None:
    async def scenario() -> None:
        done: list[str] = []

        async def quick() -> None:
            done.append("ran")

        assert start_eagerly(asyncio.get_running_loop(), quick()) is None
        assert done == ["ran"]  # before this coroutine gave the loop a turn

    asyncio.run(scenario())


def test_a_coroutine_that_waits_continues_in_a_task() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        gate: asyncio.Future[int] = loop.create_future()
        steps: list[Any] = []

        async def waits() -> None:
            steps.append("before")
            await asyncio.sleep(0)  # a bare yield
            steps.append(await gate)

        task = start_eagerly(loop, waits())
        assert isinstance(task, asyncio.Task) and steps == ["before"]
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert not task.done()
        gate.set_result(7)
        await task
        assert steps == ["before", 7]

    asyncio.run(scenario())


def test_cancelling_the_task_before_its_first_step_reaches_the_coroutine() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        seen: list[str] = []

        async def waits_forever() -> None:
            try:
                await loop.create_future()
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise
            finally:
                seen.append("cleaned up")

        task = start_eagerly(loop, waits_forever())
        assert task is not None
        task.cancel()  # the task has not run a step yet
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == ["cancelled", "cleaned up"]

    asyncio.run(scenario())


def test_a_request_array_is_still_answered_in_one_frame() -> None:
    from websockets.sync.client import connect

    with ServerProcess([GUESS]) as server, connect(server.base_url.replace("http", "ws") + "/ws") as connection:
        connection.send(json.dumps([{"id": index, "op": "open", "env": GUESS, "task": index} for index in range(3)]))
        opened: dict[Any, Any] = {}
        while len(opened) < 3:
            raw = json.loads(connection.recv())
            for answer in raw if isinstance(raw, list) else [raw]:
                opened[answer["id"]] = answer["result"]["session"]
        connection.send(
            json.dumps([{"id": f"r{index}", "op": "reset", "session": opened[index], "seed": 0} for index in range(3)])
        )
        answers = json.loads(connection.recv())
        assert isinstance(answers, list), "the resets of one request array came back in separate frames"
        assert [answer["id"] for answer in answers] == ["r0", "r1", "r2"]
        assert [answer["result"]["info"]["task_id"] for answer in answers] == ["guess-00", "guess-01", "guess-02"]
        # a lone step is answered on its own, and an unknown session still gets its error
        connection.send(json.dumps({"id": "s", "op": "step", "session": opened[0], "action": {"role": "assistant"}}))
        assert json.loads(connection.recv())["id"] == "s"
        connection.send(json.dumps({"id": "x", "op": "step", "session": ["not", "an", "id"], "action": {}}))
        assert json.loads(connection.recv())["status"] == 404


def test_requests_without_an_answer_expire_each_at_its_own_deadline() -> None:
    from websockets.asyncio.server import serve

    async def silent(connection: Any) -> None:
        async for _ in connection:
            pass  # reads every request, answers none

    async def scenario() -> None:
        async with serve(silent, "127.0.0.1", 0) as listener:
            port = listener.sockets[0].getsockname()[1]
            channel = await acquire_channel(f"ws://127.0.0.1:{port}/ws", {}, 0.6)
            try:
                first = asyncio.ensure_future(channel.request({"op": "step"}))
                await asyncio.sleep(0.4)
                second = asyncio.ensure_future(channel.request({"op": "step"}))
                with pytest.raises(RemoteEnvError, match="no answer .* within 0.6 s"):
                    await first
                assert not second.done(), "a later request expired with the first one"
                with pytest.raises(RemoteEnvError, match="within 0.6 s"):
                    await second
                assert channel.pending == {}
            finally:
                channel.release()

    asyncio.run(scenario())
