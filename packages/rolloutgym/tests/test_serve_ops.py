"""Operating ``rolloutgym serve``: bad requests, auth, limits, reaping, shutdown, metrics, hostile input.

Every test runs a real server process on a free loopback port (``ServerProcess``) and
talks to it over real sockets with httpx/websockets or the rolloutgym clients.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from rolloutgym.registry import get_registry
from rolloutgym.serve import RemoteEnv, ServerBusy, ServerProcess, SessionNotFound, Unauthorized
from rolloutgym.serve._run import is_loopback
from rolloutgym_protocol.errors import EnvClosedError, EnvNotFound, TaskNotFound

GUESS = "toy/guess-v0"


def _children(pid: int) -> set[int]:
    """Live descendants of ``pid``."""
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        parent = frontier.pop()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if fields[0] != "Z" and int(fields[1]) == parent and int(entry.name) not in found:
                found.add(int(entry.name))
                frontier.add(int(entry.name))
    return found


def _wait_for(condition: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    return condition()


def _metrics(server: ServerProcess, **headers: str) -> dict[str, Any]:
    return httpx.get(f"{server.base_url}/metrics?format=json", headers=headers).json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def server() -> Any:
    with ServerProcess([GUESS, "sql/shop-v0"], ["--max-body-bytes", "65536"]) as running:
        yield running


def _local_error(call: Any) -> BaseException:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the error under comparison
        return exc
    raise AssertionError("expected the local call to raise")


def test_unknown_env_and_task_give_the_local_messages(server: ServerProcess) -> None:
    registry = get_registry()
    for bad_id in ("toy/gues-v0", "/etc/passwd", "../../etc/passwd.json"):
        response = httpx.post(f"{server.base_url}/sessions", json={"env": bad_id})
        assert response.status_code == 404, response.text
        assert response.json()["error"]["type"] == "EnvNotFound"
        assert bad_id in response.json()["error"]["message"]
        assert "root:" not in response.text
    local = _local_error(lambda: registry.make(GUESS, task=99))
    with pytest.raises(TaskNotFound) as remote:
        RemoteEnv(server.url(GUESS), task=99)
    assert str(remote.value) == str(local)
    local = _local_error(lambda: registry.make(GUESS, task="guess-99"))
    with pytest.raises(TaskNotFound) as remote:
        RemoteEnv(server.url(GUESS), task="guess-99")
    assert str(remote.value) == str(local)
    with pytest.raises(EnvNotFound, match="toy/gues-v0"):
        RemoteEnv(f"{server.base_url}/toy/gues-v0")


def test_served_subset_cannot_reach_other_envs_or_files(server: ServerProcess, tmp_path: Path) -> None:
    env_file = tmp_path / "secret.json"
    env_file.write_text("{}")
    for reference in ("workflow/refund-v0", str(env_file), "file:" + str(env_file)):
        response = httpx.post(f"{server.base_url}/sessions", json={"env": reference})
        assert response.status_code == 404, response.text
        assert "It serves: sql/shop-v0, toy/guess-v0" in response.json()["error"]["message"]


def test_bad_calls_get_4xx_json_never_a_traceback(server: ServerProcess) -> None:
    base = server.base_url
    opened = httpx.post(f"{base}/sessions", json={"env": GUESS, "task": 0}).json()
    session = opened["session"]
    cases = [
        ("POST", "/sessions", b"{not json", 400),
        ("POST", "/sessions", b"[1, 2]", 400),
        ("POST", "/sessions", json.dumps({"env": 42}).encode(), 404),
        ("POST", "/sessions", json.dumps({"env": GUESS, "task": [1]}).encode(), 400),
        ("POST", "/sessions", json.dumps({"env": GUESS, "kwargs": {"task": "x"}}).encode(), 403),
        (
            "POST",
            f"/sessions/{session}/step",
            json.dumps({"action": {"role": "assistant", "content": "x"}}).encode(),
            409,
        ),
        ("POST", f"/sessions/{session}/step", b"{}", 400),
        ("POST", f"/sessions/{session}/reset", json.dumps({"seed": "zero"}).encode(), 400),
        ("POST", f"/sessions/{session}/call", json.dumps({"method": "__class__"}).encode(), 400),
        ("POST", f"/sessions/{session}/explode", b"{}", 400),
        ("POST", "/sessions/nope/step", json.dumps({"action": "x"}).encode(), 404),
        ("GET", "/no/such/route/at/all", b"", 404),
        ("DELETE", "/sessions", b"", 405),
    ]
    for method, path, body, status in cases:
        response = httpx.request(method, f"{base}{path}", content=body)
        assert response.status_code == status, (path, body, response.text)
        error = response.json()["error"]
        assert error["type"] and error["message"], response.text
        assert "Traceback" not in response.text
    # Step before reset: the env's own error, raised on the client as locally.
    environment = RemoteEnv(server.url(GUESS), task=0)
    local = get_registry().make(GUESS, task=0)
    action = {"role": "assistant", "content": "done"}
    assert str(_local_error(lambda: environment.step(action))) == str(_local_error(lambda: local.step(action)))
    environment.close()
    with pytest.raises(EnvClosedError, match="is closed"):
        environment.step(action)
    assert httpx.delete(f"{base}/sessions/{session}").json() == {"closed": True}
    again = httpx.delete(f"{base}/sessions/{session}")  # closed: not found, like an unknown or foreign session
    assert again.status_code == 404 and again.json()["error"]["type"] == "SessionNotFound"
    orphan = RemoteEnv(server.url(GUESS), task=0)
    assert httpx.delete(f"{base}/sessions/{orphan.session_id}").status_code == 404  # not this client's session
    httpx.delete(f"{base}/sessions/{orphan.session_id}", headers=orphan._headers)  # its owner's credentials
    with pytest.raises(SessionNotFound, match="no open session"):
        orphan.reset(seed=0)
    orphan.close()


def test_malformed_actions_behave_as_in_process(server: ServerProcess) -> None:
    local = get_registry().make(GUESS, task=1)
    remote = RemoteEnv(server.url(GUESS), task=1)
    try:
        for action in (
            42,
            "plain text",
            {"role": "assistant", "content": "", "tool_calls": [{"name": "guess", "arguments": {"number": "abc"}}]},
        ):
            local.reset(seed=3)
            remote.reset(seed=3)
            expected = local.step(action)
            found = remote.step(action)
            assert found[1:4] == expected[1:4]
            assert found[0] == expected[0]
            assert found[4].get("score") == expected[4].get("score")
    finally:
        remote.close()


def test_oversized_bodies_get_413_and_the_server_keeps_serving(server: ServerProcess) -> None:
    huge = json.dumps({"env": GUESS, "padding": "x" * 200_000}).encode()
    response = httpx.post(f"{server.base_url}/sessions", content=huge)
    assert response.status_code == 413
    assert "--max-body-bytes" in response.json()["error"]["message"]
    environment = RemoteEnv(server.url(GUESS), task=0)
    environment.reset(seed=0)
    with pytest.raises(Exception) as too_big:
        environment.step({"role": "assistant", "content": "y" * 200_000})
    assert type(too_big.value).__name__ == "RequestTooLarge"
    observation, _ = environment.reset(seed=0)
    assert observation
    environment.close()


def test_hostile_requests_leave_the_server_serving(server: ServerProcess) -> None:
    """Fuzzed JSON, random bytes, a slow client holding a half-sent request: others still get answers."""
    generator = random.Random(20261201)
    with socket.create_connection(("127.0.0.1", server.port)) as slow:
        slow.sendall(b'POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"env":')
        _fuzz(server, generator)


def _fuzz(server: ServerProcess, generator: random.Random) -> None:
    atoms: list[Any] = [None, True, 1e308, -1, "", "toy/guess-v0", {"$ref": "#"}, [], {}, "\u0000", "x" * 1000]
    paths = ["/sessions", "/sessions/x/step", "/sessions/x/reset", "/envs/toy/guess-v0/tasks", "/toy/guess-v0/schema"]
    fuzzer = httpx.Client(base_url=server.base_url)
    for _ in range(150):
        if generator.random() < 0.3:
            body = bytes(generator.randrange(256) for _ in range(generator.randrange(1, 200)))
        else:
            value: Any = {
                generator.choice(
                    ["env", "task", "action", "seed", "options", "kwargs", "reset", "method"]
                ): generator.choice(atoms)
                for _ in range(3)
            }
            for _ in range(generator.randrange(3)):
                value = {generator.choice(["env", "action"]): value}
            body = json.dumps(value).encode()
        response = fuzzer.post(generator.choice(paths), content=body)
        assert response.status_code < 500 or response.json()["error"]["type"], response.text
        assert "Traceback" not in response.text
    deep = b"[" * 30_000 + b"]" * 30_000
    assert fuzzer.post("/sessions", content=deep).status_code == 400
    fuzzer.close()
    environment = RemoteEnv(server.url(GUESS), task=2)
    environment.reset(seed=0)
    assert environment.step(environment.oracle_action())[1] in (0.0, 1.0)
    environment.close()
    sessions = httpx.get(f"{server.base_url}/sessions").json()["sessions"]
    for entry in sessions:  # fuzzing may have opened sessions; closing them is the client's job
        httpx.delete(f"{server.base_url}/sessions/{entry['session']}")
    assert httpx.get(f"{server.base_url}/health").json()["status"] == "ok"


def test_metrics_report_sessions_steps_and_latency(server: ServerProcess) -> None:
    before = _metrics(server)
    environment = RemoteEnv(server.url(GUESS), task=4)
    environment.reset(seed=0)
    for _ in range(3):
        _, _, terminated, _, _ = environment.step(environment.oracle_action())
        if terminated:
            break
    during = _metrics(server)
    assert during["sessions_open"] == before["sessions_open"] + 1
    assert during["steps_total"] > before["steps_total"]
    assert during["step_latency_seconds"]["p50"] > 0
    assert during["step_latency_seconds"]["p99"] >= during["step_latency_seconds"]["p50"]
    assert during["steps_per_second"] >= 0
    environment.close()
    text = httpx.get(f"{server.base_url}/metrics").text
    assert "rolloutgym_steps_total" in text
    assert 'rolloutgym_step_latency_seconds{quantile="0.99"}' in text
    assert _metrics(server)["sessions_open"] == before["sessions_open"]


def test_bearer_token() -> None:
    with ServerProcess([GUESS], token="s3cret") as server:
        assert httpx.get(f"{server.base_url}/health").status_code == 200
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Basic s3cret"}):
            response = httpx.get(f"{server.base_url}/envs", headers=headers)
            assert response.status_code == 401
            assert "Bearer" in response.json()["error"]["message"]
        with pytest.raises(Unauthorized):
            RemoteEnv(server.url(GUESS))
        environment = RemoteEnv(server.url(GUESS), token="s3cret")
        environment.reset(seed=0)
        environment.close()
        assert httpx.get(f"{server.base_url}/envs", headers={"authorization": "Bearer s3cret"}).status_code == 200


def test_binding_beyond_loopback_needs_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    environment = {key: value for key, value in os.environ.items() if key != "ROLLOUTGYM_SERVE_TOKEN"}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from rolloutgym.cli import console_main; console_main()",
            "serve",
            GUESS,
            "--host",
            "0.0.0.0",
            "--port",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    assert result.returncode == 2
    assert "--token" in result.stderr and "Traceback" not in result.stderr


def test_session_limit_answers_429() -> None:
    with ServerProcess([GUESS], ["--max-sessions", "2", "--max-sessions-per-owner", "2"]) as server:
        first, second = RemoteEnv(server.url(GUESS)), RemoteEnv(server.url(GUESS))
        response = httpx.post(f"{server.base_url}/sessions", json={"env": GUESS})
        assert response.status_code == 429
        assert "maximum of 2 sessions" in response.json()["error"]["message"]
        with pytest.raises(ServerBusy, match="--max-sessions"):
            RemoteEnv(server.url(GUESS))
        first.close()
        third = RemoteEnv(server.url(GUESS))
        third.reset(seed=0)
        for environment in (second, third):
            environment.close()
        assert _metrics(server)["sessions_rejected_total"] == 2


CLIENT = """
import sys, time
from rolloutgym.serve import RemoteEnv
environments = []
for url in sys.argv[1:]:
    environments.append(RemoteEnv(url))
    environments[-1].reset(seed=0)
    environments[-1].step(environments[-1].oracle_action())
print("ready", flush=True)
time.sleep(600)
"""


def test_killed_client_sessions_are_reaped_leaving_nothing(tmp_path: Path) -> None:
    temp = tmp_path / "server-tmp"
    temp.mkdir()
    envs = [GUESS, "sql/shop-v0"]
    try:
        get_registry().make("code/pyfunc-v0").close()
        envs.append("code/pyfunc-v0")
    except Exception:  # noqa: BLE001 - no sandbox on this machine: the other envs still show reaping
        pass
    with ServerProcess(envs, ["--idle-timeout", "4"], env={"TMPDIR": str(temp)}) as server:
        for env_id in envs:  # warm up: process-wide worker pools (the sql plugin keeps idle workers) exist from here on
            warm = RemoteEnv(server.url(env_id))
            warm.reset(seed=0)
            warm.step(warm.oracle_action())
            warm.close()
        baseline_children = _children(server.pid)  # type: ignore[arg-type]
        client = subprocess.Popen(
            [sys.executable, "-c", CLIENT, *(server.url(env_id) for env_id in envs)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert client.stdout is not None and client.stdout.readline().strip() == "ready"
            assert _metrics(server)["sessions_open"] == len(envs)
            assert any(entry.name.startswith("rolloutgym-") for entry in temp.iterdir())
        finally:
            client.send_signal(signal.SIGKILL)
            client.wait()
            assert client.stdout is not None
            client.stdout.close()
        assert _wait_for(lambda: _metrics(server)["sessions_open"] == 0, timeout=30)
        assert _metrics(server)["sessions_reaped_total"] == len(envs)
        assert _wait_for(lambda: _children(server.pid) <= baseline_children), "env processes left after reaping"  # type: ignore[arg-type]

        def session_dirs() -> list[str]:
            prefixes = ("rolloutgym-code", "rolloutgym-browser")
            return [entry.name for entry in temp.iterdir() if entry.name.startswith(prefixes)]

        assert _wait_for(lambda: not session_dirs()), f"per-session files left: {session_dirs()}"


def test_websocket_disconnect_closes_the_session_at_once() -> None:
    from websockets.sync.client import connect

    with ServerProcess([GUESS], ["--idle-timeout", "600"]) as server:
        socket_url = server.base_url.replace("http", "ws") + "/ws"
        with connect(socket_url) as connection:
            connection.send(json.dumps({"op": "open", "env": GUESS, "task": 0}))
            assert json.loads(connection.recv())["ok"]
            connection.send("{broken")
            answer = json.loads(connection.recv())
            assert answer["ok"] is False and answer["status"] == 400
            connection.send(json.dumps({"op": "reset", "seed": 0}))
            assert json.loads(connection.recv())["ok"]
            assert _metrics(server)["sessions_open"] == 1
        assert _wait_for(lambda: _metrics(server)["sessions_open"] == 0, timeout=10)


def test_graceful_shutdown_closes_every_env(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    server = ServerProcess([GUESS, "sql/shop-v0"], log_path=str(log)).start()
    try:
        environments = [
            RemoteEnv(server.url(env_id), task=index) for index, env_id in enumerate([GUESS, GUESS, "sql/shop-v0"])
        ]
        for environment in environments:
            environment.reset(seed=0)
    finally:
        code = server.stop()
    for environment in environments:
        environment.close()  # the server is gone: closing only releases the client's connections
    assert code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    events = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    closed = [event for event in events if event.get("event") == "close" and event.get("reason") == "shutdown"]
    assert len(closed) == 3
    assert events[-1]["event"] == "stop"
    assert all({"time", "level", "logger", "message"} <= set(event) for event in events)


def test_abandoned_sessions_return_memory() -> None:
    """1,000 sessions opened and abandoned: once the reaper has closed them, the heap is back at its baseline.

    The server's session manager with its real reaper task, in process so the Python heap
    can be measured exactly (``sys.getallocatedblocks``); a first round warms caches and
    free lists. ``benchmarks/serve.py`` measures the same through HTTP (RSS of a server).
    """
    import asyncio
    import gc

    from rolloutgym.serve import Catalog, SessionManager

    async def scenario() -> tuple[int, int, int]:
        manager = SessionManager(Catalog([GUESS]), max_sessions=2000, idle_timeout=0.2)
        manager.start()

        async def abandon(count: int) -> int:
            for index in range(count):
                session = await manager.open(GUESS, task=index % 30)
                await manager.reset(session.id, seed=index)
            opened = len(manager.sessions)
            for _ in range(200):
                await asyncio.sleep(0.05)
                if not manager.sessions:
                    break
            return opened

        await abandon(1000)
        gc.collect()
        baseline = sys.getallocatedblocks()
        assert await abandon(1000) == 1000
        await manager.close_all()
        gc.collect()
        after = sys.getallocatedblocks()
        return baseline, after, manager.metrics.sessions_reaped

    baseline, after, reaped = asyncio.run(scenario())
    assert reaped == 2000
    assert after - baseline <= 500, (
        f"heap blocks: {baseline} before 1,000 abandoned sessions, {after} after they were reaped"
    )


def test_openenv_client_messages(server: ServerProcess) -> None:
    """OpenEnv's ``EnvClient`` wire format (openenv-core 0.3.0: ``{base}/ws``, typed messages), spoken with websockets.

    (openenv-core's client itself needs fastmcp and more, so the test speaks its documented
    messages directly.)
    """
    from websockets.sync.client import connect

    assert httpx.get(f"{server.url(GUESS)}/health").json() == {"status": "healthy"}
    assert httpx.get(f"{server.url(GUESS)}/metadata").json()["name"] == GUESS
    schema = httpx.get(f"{server.url(GUESS)}/schema").json()
    assert {"action", "observation", "state"} <= set(schema)
    local = get_registry().make(GUESS, task=5)
    expected_observation, _ = local.reset(seed=1)
    with connect(server.url(GUESS).replace("http", "ws") + "/ws") as connection:
        connection.send(json.dumps({"type": "reset", "data": {"seed": 1, "episode_id": "e1", "task": 5}}))
        reply = json.loads(connection.recv())
        assert reply["type"] == "observation" and reply["data"]["done"] is False
        assert reply["data"]["observation"]["observation"] == expected_observation
        done = False
        while not done:
            action = local.oracle_action()
            expected = local.step(action)
            connection.send(json.dumps({"type": "step", "data": {**action, "metadata": {}}}))
            reply = json.loads(connection.recv())
            assert reply["type"] == "observation", reply
            assert reply["data"]["reward"] == expected[1]
            assert reply["data"]["observation"]["observation"] == expected[0]
            done = reply["data"]["done"]
        assert expected[2] and expected[1] == 1.0
        connection.send(json.dumps({"type": "state"}))
        state = json.loads(connection.recv())
        assert state["type"] == "state" and state["data"]["episode_id"] == "e1" and state["data"]["step_count"] >= 1
        connection.send(json.dumps({"type": "dance"}))
        assert json.loads(connection.recv())["data"]["code"] == "UNKNOWN_TYPE"
        connection.send(json.dumps({"type": "close"}))
