"""``/ws`` with many sessions on one connection, and tools that change during an episode.

Real ``rolloutgym serve`` processes on 127.0.0.1, spoken to with ``websockets`` and the
rolloutgym clients.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
from rolloutgym.serve import AsyncRemoteEnv, RemoteEnv, RemoteEnvError, ServerProcess

GUESS = "toy/guess-v0"
MISS_FUNC = "bfcl/multi-turn-miss-func-v0"


def _open_sessions(server: ServerProcess) -> int:
    return int(httpx.get(f"{server.base_url}/health").json()["sessions"])


def _wait_for(condition: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def test_many_sessions_share_one_connection_and_close_with_it() -> None:
    from websockets.sync.client import connect

    with ServerProcess([GUESS]) as server:
        with connect(server.base_url.replace("http", "ws") + "/ws") as connection:
            connection.send(
                json.dumps([{"id": index, "op": "open", "env": GUESS, "task": index} for index in range(3)])
            )
            answers: dict[Any, Any] = {}
            while len(answers) < 3:
                raw = json.loads(connection.recv())
                for answer in raw if isinstance(raw, list) else [raw]:
                    answers[answer["id"]] = answer
            sessions = [answers[index]["result"]["session"] for index in range(3)]
            assert [answers[index]["result"]["task_index"] for index in range(3)] == [0, 1, 2]
            connection.send(json.dumps({"id": "r", "op": "reset", "session": sessions[1], "seed": 0}))
            reset = json.loads(connection.recv())
            assert reset["id"] == "r" and reset["ok"] and reset["result"]["info"]["task_id"] == "guess-01"
            # an error is an answer with the request's id; the connection and its sessions stay
            connection.send(json.dumps({"id": 7, "op": "step", "session": "nope", "action": {}}))
            error = json.loads(connection.recv())
            assert error == {"id": 7, "ok": False, "status": 404, "error": error["error"]}
            assert error["error"]["type"] == "SessionNotFound"
            connection.send(json.dumps({"id": 8, "op": "step", "action": {}}))
            assert "names its" in json.loads(connection.recv())["error"]["message"]
            connection.send(json.dumps({"id": 9, "op": "close", "session": sessions[0]}))
            assert json.loads(connection.recv())["result"] == {"closed": True}
            assert _open_sessions(server) == 2
        assert _wait_for(lambda: _open_sessions(server) == 0), "sessions outlived their connection"


def test_async_remote_envs_of_one_loop_share_a_connection() -> None:
    with ServerProcess([GUESS]) as server:
        url = server.url(GUESS)

        async def scenario() -> None:
            environments = await asyncio.gather(*(AsyncRemoteEnv.open(url, task=index) for index in range(20)))
            assert len({id(environment._socket) for environment in environments}) == 1
            results = await asyncio.gather(*(environment.reset(seed=0) for environment in environments))
            assert [info["task_id"] for _, info in results] == [f"guess-{index:02d}" for index in range(20)]
            rewards = []
            for environment in environments:
                terminated = truncated = False
                while not (terminated or truncated):
                    _, reward, terminated, truncated, _ = await environment.step(await environment.oracle_action())
                rewards.append(reward)
            assert rewards == [1.0] * 20
            await asyncio.gather(*(environment.close() for environment in environments[:10]))
            _, info = await environments[10].reset(seed=1)  # the others still work
            assert info["task_id"] == "guess-10"
            await asyncio.gather(*(environment.close() for environment in environments[10:]))

        asyncio.run(scenario())
        assert _open_sessions(server) == 0


def test_a_dropped_connection_fails_its_sessions_with_a_typed_error() -> None:
    server = ServerProcess([GUESS]).start()
    url = server.url(GUESS)

    async def scenario() -> None:
        environment = await AsyncRemoteEnv.open(url, task=0)
        await environment.reset(seed=0)
        server.kill()
        with pytest.raises(RemoteEnvError, match="lost the connection"):
            await environment.step(await environment.oracle_action())
        await environment.close()  # releases what is left on the client; no error

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def _miss_func_task() -> int:
    """A miss-func task whose tool list grows during the episode (task 0 does on this BFCL data)."""
    import rolloutgym as rg

    environment = rg.make(MISS_FUNC, task=0)
    try:
        assert environment.task.held_out, "task 0 of miss-func adds no tools; pick another task"
    finally:
        environment.close()
    return 0


def test_remote_tools_follow_the_served_env_during_an_episode() -> None:
    """BFCL miss-func adds a tool mid-episode: the remote env's ``tools`` follow, over HTTP and WebSocket."""
    pytest.importorskip("rolloutgym_bfcl")
    import rolloutgym as rg

    task = _miss_func_task()
    local = rg.make(MISS_FUNC, task=task)
    with ServerProcess([MISS_FUNC]) as server:
        remote = RemoteEnv(server.url(MISS_FUNC), task=task)

        async def open_async() -> AsyncRemoteEnv:
            return await AsyncRemoteEnv.open(server.url(MISS_FUNC), task=task)

        loop = asyncio.new_event_loop()
        remote_ws = loop.run_until_complete(open_async())
        try:
            local.reset(seed=0)
            remote.reset(seed=0)
            loop.run_until_complete(remote_ws.reset(seed=0))
            counts = []
            terminated = truncated = False
            while not (terminated or truncated):
                action = local.oracle_action()
                assert remote.oracle_action() == action
                assert loop.run_until_complete(remote_ws.oracle_action()) == action
                _, reward, terminated, truncated, _ = local.step(action)
                assert remote.step(action)[1] == reward
                assert loop.run_until_complete(remote_ws.step(action))[1] == reward
                assert remote.tools == local.tools and remote_ws.tools == local.tools
                counts.append(len(remote.tools))
            assert counts[0] < counts[-1], f"the tool list never grew: {counts}"
        finally:
            remote.close()
            loop.run_until_complete(remote_ws.close())
            loop.close()
            local.close()


def test_unchanged_tools_are_not_sent_again() -> None:
    from websockets.sync.client import connect

    with ServerProcess([GUESS]) as server:
        with connect(server.base_url.replace("http", "ws") + "/ws") as connection:
            connection.send(json.dumps({"op": "open", "env": GUESS, "task": 1}))
            assert json.loads(connection.recv())["result"]["tools"]
            connection.send(json.dumps({"op": "reset", "seed": 0}))
            assert "tools" not in json.loads(connection.recv())["result"]
            connection.send(json.dumps({"op": "call", "method": "oracle_action"}))
            action = json.loads(connection.recv())["result"]["result"]
            connection.send(json.dumps({"op": "step", "action": action}))
            result = json.loads(connection.recv())["result"]
            assert "tools" not in result and "action_space" not in result


def test_quick_sync_calls_move_onto_the_event_loop_and_slow_ones_back() -> None:
    """The server's adapter for sync envs: threads first, inline once calls prove quick, threads after a slow one."""
    import threading

    import gymnasium as gym
    from rolloutgym.serve._quick_calls import QuickCallsInline

    class Recorder(gym.Env[int, int]):
        observation_space = gym.spaces.Discrete(10)
        action_space = gym.spaces.Discrete(10)

        def __init__(self) -> None:
            self.threads: list[bool] = []  # True: called on the event loop's thread
            self.delay = 0.0

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[int, dict[str, Any]]:
            self.threads.append(threading.current_thread() is threading.main_thread())
            return 0, {}

        def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
            self.threads.append(threading.current_thread() is threading.main_thread())
            time.sleep(self.delay)
            return action, 0.0, False, False, {}

    class Adapter(QuickCallsInline):  # thresholds no busy machine can blur: "quick" < 1 s, "slow" > 40 ms
        QUICK_SECONDS = 1.0
        SLOW_SECONDS = 0.04

    env = Recorder()
    adapted = Adapter(env)

    async def scenario() -> None:
        await adapted.reset(seed=0)
        for _ in range(5):
            await adapted.step(1)
        env.delay = 0.06
        await adapted.step(1)  # inline, and too slow: back to threads
        env.delay = 0.0
        for _ in range(5):
            await adapted.step(1)
        await adapted.close()

    asyncio.run(scenario())
    assert env.threads[:3] == [False, False, False]  # three quick calls in worker threads
    assert env.threads[3:7] == [True, True, True, True]  # then on the loop, including the slow one
    assert env.threads[7:] == [False] * 5  # after it, threads for good


def test_odd_requests_get_answers_naming_the_problem() -> None:
    """Requests the hot path of ``/ws`` does not take (odd ops, a step without its action, ids of any
    JSON kind) are answered with the request's id and an error that names the problem; the
    connection and its session go on."""
    from websockets.sync.client import connect

    with ServerProcess([GUESS]) as server:
        with connect(server.base_url.replace("http", "ws") + "/ws") as connection:
            connection.send(json.dumps({"id": 1, "op": "open", "env": GUESS, "task": 0}))
            session = json.loads(connection.recv())["result"]["session"]
            odd: list[tuple[Any, dict[str, Any], str]] = [
                ([1], {"op": ["step"], "session": session}, "unknown operation"),
                ({"k": 1}, {"op": {"step": 1}, "session": session}, "unknown operation"),
                (2.5, {"op": "dance", "session": session}, "unknown operation"),
                ("s", {"op": "step", "session": session}, 'step needs {"action": ...}'),
                (None, {"op": "call", "session": session, "method": "rm -rf"}, "method must be one of"),
            ]
            for identifier, request, words in odd:
                connection.send(json.dumps({"id": identifier, **request}))
                answer = json.loads(connection.recv())
                assert answer["id"] == identifier and answer["ok"] is False, answer
                assert 400 <= answer["status"] < 500 and words in answer["error"]["message"], answer
            connection.send(json.dumps({"id": 3, "op": "reset", "session": session, "seed": 0}))
            assert json.loads(connection.recv())["ok"] is True  # the session is still there


@pytest.mark.parametrize("hide", [False, True])
def test_a_call_waiting_on_a_session_closed_under_it_is_not_found(hide: bool) -> None:
    """A step that waited for the session's lock while the session closed gets SessionNotFound (404),
    also on a server that withholds the env's own errors (--hide-task-items): it is not the env's error."""
    from rolloutgym.serve import Catalog, SessionManager
    from rolloutgym.serve._errors import SessionNotFound

    async def scenario() -> BaseException | None:
        manager = SessionManager(Catalog([GUESS]), hide_task_data=hide)
        session = await manager.open(GUESS, task=0)
        await manager.reset(session.id, seed=0)
        await session.lock.acquire()  # a call in flight
        step = asyncio.ensure_future(manager.step(session.id, {"role": "assistant", "content": "hi"}))
        close = asyncio.ensure_future(manager.close(session.id))
        await asyncio.sleep(0)
        session.lock.release()
        results = await asyncio.gather(step, close, return_exceptions=True)
        return results[0] if isinstance(results[0], BaseException) else None

    error = asyncio.run(scenario())
    assert type(error) is SessionNotFound, repr(error)
