"""``rolloutgym serve`` against in-process envs, on loopback: what the network costs.

* **per-step overhead**: the same ``toy/guess-v0`` oracle episodes (actions recorded once
  in process, then replayed) in process, through ``RemoteEnv`` (HTTP) and through
  ``AsyncRemoteEnv`` (WebSocket); prints µs per call (reset or step) and the added µs
  (target: WebSocket adds at most 200 µs per step). The floor, measured in the same run:
  the same messages echoed by a bare uvicorn + Starlette WebSocket app (the server's stack)
  through the same client channel, and by a bare ``websockets`` echo server.
* **concurrent sessions**: ``--sessions`` (1,000) members of ``workflow/refund-v0`` with the
  oracle, all in flight at once (``concurrency=sessions``), through ``arollout_group`` in
  process and with ``AsyncRemoteEnv`` sessions on one server; prints episodes/s and the
  ratio (target: remote >= 0.5x), the CPU seconds of client and server, plus the server's
  memory per open session (RSS with the sessions open and reset, minus RSS before).
* **OpenEnv** (``--openenv-python PY``, an interpreter with ``openenv-core``): the same
  per-step and concurrent figures for a trivial guessing env on OpenEnv's own server
  (``create_app`` + uvicorn) and for ``toy/guess-v0`` on rolloutgym's OpenEnv route, both
  driven by the same bare ``websockets`` client speaking OpenEnv's messages.

* **ORS** (the ``openreward`` SDK): the same ``toy/guess-v0`` oracle steps as tool calls of
  ORS sessions (``session.call_tool``, HTTP with a server-sent-event answer) against the
  OpenEnv route's WebSocket steps, same server, same env; prints the median µs per step
  and the ratio.

Each measurement alternates in-process and remote runs (best of ``--repeats``); the load
average is printed, since the figures move with it on a shared machine.

Run: ``python benchmarks/serve.py [--episodes 200] [--sessions 1000] [--openenv-python PY] [--skip ors ...]``
(needs ``rolloutgym[serve]``). The servers are separate processes on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import httpx
import rolloutgym as rg
from rolloutgym.rollouts import arollout_group
from rolloutgym.serve import AsyncRemoteEnv, RemoteEnv, ServerProcess

GUESS = "toy/guess-v0"
REFUND = "workflow/refund-v0"


def recorded_episodes(count: int) -> list[tuple[int, int, list[Any]]]:
    """(task, seed, oracle actions) of ``count`` in-process episodes."""
    episodes = []
    for index in range(count):
        environment = rg.make(GUESS, task=index % 30)
        environment.reset(seed=index)
        actions = []
        terminated = truncated = False
        while not (terminated or truncated):
            action = environment.oracle_action()
            actions.append(action)
            _, _, terminated, truncated, _ = environment.step(action)
        environment.close()
        episodes.append((index % 30, index, actions))
    return episodes


def replay(environments: list[Any], episodes: list[tuple[int, int, list[Any]]]) -> tuple[float, int]:
    """Replay ``episodes`` on the already opened ``environments`` (one each), then close them: (seconds, calls)."""
    calls = 0
    started = time.perf_counter()
    for environment, (_, seed, actions) in zip(environments, episodes, strict=True):
        environment.reset(seed=seed)
        for action in actions:
            environment.step(action)
        calls += 1 + len(actions)
    elapsed = time.perf_counter() - started
    for environment in environments:
        environment.close()
    return elapsed, calls


def replay_local(episodes: list[tuple[int, int, list[Any]]]) -> tuple[float, int]:
    return replay([rg.make(GUESS, task=task) for task, _, _ in episodes], episodes)


def replay_http(url: str, episodes: list[tuple[int, int, list[Any]]]) -> tuple[float, int]:
    return replay([RemoteEnv(url, task=task) for task, _, _ in episodes], episodes)


def replay_ws(url: str, episodes: list[tuple[int, int, list[Any]]]) -> tuple[float, int]:
    async def main() -> tuple[float, int]:
        environments = [await AsyncRemoteEnv.open(url, task=task) for task, _, _ in episodes]
        calls = 0
        started = time.perf_counter()
        for environment, (_, seed, actions) in zip(environments, episodes, strict=True):
            await environment.reset(seed=seed)
            for action in actions:
                await environment.step(action)
            calls += 1 + len(actions)
        elapsed = time.perf_counter() - started
        for environment in environments:
            await environment.close()
        return elapsed, calls

    return asyncio.run(main())


ECHO_WEBSOCKETS = """
import asyncio, sys
from websockets.asyncio.server import serve
async def echo(connection):
    async for message in connection:
        await connection.send(message)
async def main():
    async with serve(echo, "127.0.0.1", int(sys.argv[1]), compression=None):
        await asyncio.Future()
asyncio.run(main())
"""

ECHO_UVICORN = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
async def echo(websocket):
    await websocket.accept()
    while True:
        event = await websocket.receive()
        if event["type"] != "websocket.receive":
            break
        await websocket.send({"type": "websocket.send", "text": event["text"]})
app = Starlette(routes=[WebSocketRoute("/ws", echo)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", ws="websockets-sansio",
            ws_per_message_deflate=False, lifespan="off")
"""

STEP_MESSAGE = {
    "op": "step",
    "action": {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "call_0", "name": "guess", "arguments": {"number": 25}}],
    },
}


def start_script(script: str, python: str | None = None, quiet: bool = False) -> tuple[Any, int]:
    """A helper server (``script`` with its port as argument) in another process, once it accepts connections.

    ``quiet``: drop its stderr (OpenEnv's server logs a traceback for every client that disconnects).
    """
    import socket
    import subprocess
    import sys

    from rolloutgym.serve import free_port

    port = free_port()
    process = subprocess.Popen(
        [python or sys.executable, "-c", script, str(port)], stderr=subprocess.DEVNULL if quiet else None
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"helper server on port {port} did not start")


def echo_channel(port: int, calls: int) -> float:
    """µs per round trip through rolloutgym's client channel to a bare uvicorn + Starlette echo app."""
    from rolloutgym.serve._channel import acquire_channel

    async def measure() -> float:
        channel = await acquire_channel(f"ws://127.0.0.1:{port}/ws", {}, 30.0)
        started = time.perf_counter()
        for _ in range(calls):
            await channel.request(dict(STEP_MESSAGE), strict=True)  # as AsyncRemoteEnv.step sends it
        elapsed = time.perf_counter() - started
        channel.release()
        return elapsed / calls * 1e6

    return asyncio.run(measure())


def echo_websockets(port: int, calls: int) -> float:
    """µs per round trip of the ``websockets`` client against a bare ``websockets`` echo server."""
    import json

    from websockets.asyncio.client import connect

    message = json.dumps(STEP_MESSAGE)

    async def measure() -> float:
        async with connect(f"ws://127.0.0.1:{port}", compression=None, proxy=None) as connection:
            started = time.perf_counter()
            for _ in range(calls):
                await connection.send(message)
                await connection.recv()
            return (time.perf_counter() - started) / calls * 1e6

    return asyncio.run(measure())


def load() -> str:
    import os

    return "load average " + " ".join(f"{value:.1f}" for value in os.getloadavg())


def per_step(server: ServerProcess, episodes: int, repeats: int) -> None:
    recorded = recorded_episodes(episodes)
    calls = sum(1 + len(actions) for _, _, actions in recorded)
    url = server.url(GUESS)
    uvicorn_echo, uvicorn_port = start_script(ECHO_UVICORN)
    websockets_echo, websockets_port = start_script(ECHO_WEBSOCKETS)
    runs = {
        "in-process": lambda: replay_local(recorded),
        "http": lambda: replay_http(url, recorded),
        "websocket": lambda: replay_ws(url, recorded),
        "echo-stack": lambda: (echo_channel(uvicorn_port, calls) * calls / 1e6, calls),
        "echo-bare": lambda: (echo_websockets(websockets_port, calls) * calls / 1e6, calls),
    }
    results: dict[str, list[float]] = {name: [] for name in runs}
    print(f"per-step overhead ({episodes} toy/guess-v0 episodes, {calls} calls, best of {repeats}; {load()}):")
    try:
        for _ in range(repeats):
            for name, function in runs.items():
                elapsed, count = function()
                results[name].append(elapsed / count * 1e6)
    finally:
        for process in (uvicorn_echo, websockets_echo):
            process.terminate()
            process.wait()
    local = min(results["in-process"])
    labels = {
        "echo-stack": "echo, uvicorn+starlette server, rolloutgym client channel (the floor)",
        "echo-bare": "echo, bare websockets server and client",
    }
    for name, values in results.items():
        best = min(values)
        extra = "" if name == "in-process" or name.startswith("echo") else f"   added {best - local:8.1f} µs per call"
        print(f"  {name:<11} {best:8.1f} µs per call (median {statistics.median(values):.1f}){extra}")
        if name in labels:
            print(f"              ({labels[name]})")
    added = min(results["websocket"]) - local
    floor = min(results["echo-stack"])
    verdict = "met" if added <= 200 else "NOT met"
    print(f"  websocket added {added:.0f} µs per step (target <= 200 µs): {verdict}")
    print(f"  rolloutgym above the same stack's bare echo: {min(results['websocket']) - floor:.0f} µs per step")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used."""
    import os

    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def concurrent(server: ServerProcess, sessions: int, repeats: int) -> None:
    registry = rg.get_registry()
    items = registry.tasks(REFUND)
    oracle = registry.make_policy("oracle")
    url = server.url(REFUND)
    ids = {id(item): index for index, item in enumerate(items)}

    async def group(make_env: Any) -> float:
        started = time.perf_counter()
        result = await arollout_group(items[0], make_env, oracle, num_rollouts=sessions, seed=0, concurrency=sessions)
        elapsed = time.perf_counter() - started
        assert not result.errors and min(result.rewards) == 1.0, result.errors[:1]
        return elapsed

    def run_local() -> float:
        return asyncio.run(group(lambda item: registry.make(REFUND, task=item)))

    def run_remote() -> float:
        return asyncio.run(group(lambda item: AsyncRemoteEnv.open(url, task=ids[id(item)])))

    local_times, remote_times, client_cpu, server_cpu, local_cpu = [], [], [], [], []
    print(f"{sessions} concurrent {REFUND} oracle episodes (best of {repeats}; {load()}):")
    for _ in range(repeats):
        started_cpu = time.process_time()
        local_times.append(run_local())
        local_cpu.append(time.process_time() - started_cpu)
        started_cpu, started_server = time.process_time(), process_cpu(server.pid)  # type: ignore[arg-type]
        remote_times.append(run_remote())
        client_cpu.append(time.process_time() - started_cpu)
        server_cpu.append(process_cpu(server.pid) - started_server)  # type: ignore[arg-type]
    local, remote = min(local_times), min(remote_times)
    print(
        f"  in-process arollout_group  {sessions / local:8.1f} episodes/s ({local:.2f} s, {min(local_cpu):.2f} s CPU)"
    )
    print(
        f"  remote (WebSocket)         {sessions / remote:8.1f} episodes/s ({remote:.2f} s; CPU: client "
        f"{min(client_cpu):.2f} s, server {min(server_cpu):.2f} s)"
    )
    ratio = local / remote
    print(f"  ratio remote / in-process  {ratio:.2f}x (target >= 0.5x): {'met' if ratio >= 0.5 else 'NOT met'}")
    print(
        f"  all runs (s): in-process {', '.join(f'{t:.2f}' for t in local_times)}; "
        f"remote {', '.join(f'{t:.2f}' for t in remote_times)}"
    )
    before, during, blocks_before, blocks_during = session_memory(sessions, len(items))
    print(
        f"  server memory (a fresh server): {before / 2**20:.0f} MiB idle, {during / 2**20:.0f} MiB with {sessions} "
        f"open sessions = {(during - before) / sessions / 1024:.1f} KiB per session "
        f"({(blocks_during - blocks_before) / sessions:.0f} Python heap blocks per session)"
    )


def session_memory(sessions: int, tasks: int) -> tuple[int, int, int, int]:
    """A fresh server's RSS and Python heap blocks before, and with ``sessions`` sessions open and reset.

    A fresh process: after the throughput runs the allocator keeps its high-water mark, and
    new sessions would fill memory the old ones left (the RSS delta would read near zero).
    """

    async def measure(server: ServerProcess) -> tuple[int, int, int, int]:
        url = server.url(REFUND)

        def snapshot() -> tuple[int, int]:
            metrics = httpx.get(f"{server.base_url}/metrics?format=json").json()
            return int(metrics["process_resident_bytes"]), int(metrics["python_allocated_blocks"])

        warm = await AsyncRemoteEnv.open(url, task=0)  # imports and caches that the first session builds
        await warm.reset(seed=0)
        await warm.close()
        before = snapshot()
        environments = await asyncio.gather(
            *(AsyncRemoteEnv.open(url, task=index % tasks) for index in range(sessions))
        )
        await asyncio.gather(*(environment.reset(seed=index) for index, environment in enumerate(environments)))
        during = snapshot()
        await asyncio.gather(*(environment.close() for environment in environments))
        return before[0], during[0], before[1], during[1]

    with ServerProcess(
        [REFUND],
        [
            "--max-sessions",
            str(sessions + 10),
            "--max-sessions-per-owner",
            str(sessions + 10),
            "--log-level",
            "warning",
        ],
    ) as server:
        return asyncio.run(measure(server))


OPENENV_ENV = """
import random
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

class GuessAction(Action):
    number: int

class GuessObservation(Observation):
    feedback: str = ""
    high: int = 0

class GuessEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self):
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self.target, self.high = 1, 10

    def reset(self, seed=None, episode_id=None, **kwargs):
        rng = random.Random(seed)
        self.high = rng.choice([10, 50, 100])
        self.target = rng.randint(1, self.high)
        self._state = State(episode_id=episode_id, step_count=0)
        return GuessObservation(feedback="guess", high=self.high, done=False, reward=0.0)

    def step(self, action, timeout_s=None, **kwargs):
        self._state.step_count += 1
        if action.number == self.target:
            return GuessObservation(feedback="correct", high=self.high, done=True, reward=1.0)
        feedback = "higher" if action.number < self.target else "lower"
        return GuessObservation(feedback=feedback, high=self.high, done=False, reward=0.0)

    @property
    def state(self):
        return self._state
"""

OPENENV_SERVER = (
    OPENENV_ENV
    + """
import sys, uvicorn
from openenv.core.env_server.http_server import create_app
app = create_app(GuessEnvironment, GuessAction, GuessObservation, env_name="guess",
                 max_concurrent_envs=int(sys.argv[2]))
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""
)

OPENENV_IN_PROCESS = (
    OPENENV_ENV
    + """
import time
env = GuessEnvironment()
calls = 0
started = time.perf_counter()
for seed in range(300):
    observation = env.reset(seed=seed)
    low, high = 1, observation.high
    calls += 1
    while not observation.done:
        guess = (low + high) // 2
        observation = env.step(GuessAction(number=guess))
        calls += 1
        if observation.feedback == "higher":
            low = guess + 1
        else:
            high = guess - 1
print((time.perf_counter() - started) / calls * 1e6)
"""
)


async def openenv_episode(connection: Any, task: int, seed: int, actions: list[Any] | None) -> int:
    """One episode over an OpenEnv WebSocket: reset, then bisect (OpenEnv's env) or replay ``actions`` (ours)."""
    import json

    await connection.send(json.dumps({"type": "reset", "data": {"seed": seed, "task": task}}))
    return 1 + await replay_after_reset(connection, await connection.recv(), actions)


def openenv_sequential(url: str, episodes: list[tuple[int, int, list[Any]]] | int) -> float:
    """µs per call (reset or step) of sequential episodes over one OpenEnv WebSocket."""
    from websockets.asyncio.client import connect

    async def measure() -> float:
        async with connect(url, compression=None, proxy=None, max_size=None) as connection:
            calls = 0
            started = time.perf_counter()
            if isinstance(episodes, int):
                for seed in range(episodes):
                    calls += await openenv_episode(connection, 0, seed, None)
            else:
                for task, seed, actions in episodes:
                    calls += await openenv_episode(connection, task, seed, actions)
            return (time.perf_counter() - started) / calls * 1e6

    return asyncio.run(measure())


def openenv_concurrent(url: str, sessions: int, episodes: list[Any] | None, pid: int) -> tuple[float, float]:
    """µs per call with ``sessions`` episodes in flight (a connection each, as OpenEnv's client does), and
    the server's RSS growth per session (bytes) once all of them are open and reset."""
    import json

    from websockets.asyncio.client import connect

    def resident() -> int:
        import os

        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def episode(index: int) -> tuple[int, int, list[Any] | None]:
        return (0, index, None) if episodes is None else episodes[index % len(episodes)]

    async def measure() -> tuple[float, float]:
        before = resident()
        connections = await asyncio.gather(
            *(connect(url, compression=None, proxy=None, max_size=None) for _ in range(sessions))
        )
        started = time.perf_counter()
        for index, connection in enumerate(connections):
            task, seed, _ = episode(index)
            await connection.send(json.dumps({"type": "reset", "data": {"seed": seed, "task": task}}))
        first = await asyncio.gather(*(connection.recv() for connection in connections))
        during = resident()
        calls = await asyncio.gather(
            *(
                replay_after_reset(connection, raw, episode(index)[2])
                for index, (connection, raw) in enumerate(zip(connections, first, strict=True))
            )
        )
        elapsed = time.perf_counter() - started
        await asyncio.gather(*(connection.close() for connection in connections))
        return elapsed / (sessions + sum(calls)) * 1e6, (during - before) / sessions

    return asyncio.run(measure())


async def replay_after_reset(connection: Any, raw: str, actions: list[Any] | None) -> int:
    """The steps of an episode whose reset answer ``raw`` has arrived; returns how many."""
    import json

    answer = json.loads(raw)["data"]
    calls = 0
    if actions is not None:
        for action in actions:
            await connection.send(json.dumps({"type": "step", "data": action}))
            assert json.loads(await connection.recv())["type"] == "observation"
            calls += 1
        return calls
    low, high = 1, answer["observation"]["high"]
    while not answer["done"]:
        guess = (low + high) // 2
        await connection.send(json.dumps({"type": "step", "data": {"number": guess}}))
        answer = json.loads(await connection.recv())["data"]
        calls += 1
        low, high = (guess + 1, high) if answer["observation"]["feedback"] == "higher" else (low, guess - 1)
    return calls


def openenv(python: str, episodes: int, sessions: int, repeats: int) -> None:
    """Both servers fresh (the memory figure is their first concurrent run's), driven alike."""
    import subprocess

    try:
        in_process = float(
            subprocess.run([python, "-c", OPENENV_IN_PROCESS], capture_output=True, text=True, check=True).stdout
        )
    except (OSError, subprocess.CalledProcessError, ValueError) as exc:
        print(f"OpenEnv: not measured ({python} cannot run openenv-core: {exc})")
        return
    recorded = recorded_episodes(episodes)
    calls = sum(1 + len(actions) for _, _, actions in recorded)
    ours_in_process = min(replay_local(recorded)[0] / calls * 1e6 for _ in range(repeats))
    script = OPENENV_SERVER.replace("int(sys.argv[2])", str(sessions + 10))  # OpenEnv's session limit
    process, port = start_script(script, python, quiet=True)
    server = ServerProcess(
        [GUESS],
        [
            "--max-sessions",
            str(sessions + 10),
            "--max-sessions-per-owner",
            str(sessions + 10),
            "--log-level",
            "warning",
        ],
    ).start()
    theirs_url = f"ws://127.0.0.1:{port}/ws"
    ours_url = server.url(GUESS).replace("http", "ws") + "/ws"
    sequential: dict[str, list[float]] = {"openenv": [], "rolloutgym": []}
    concurrent_runs: dict[str, list[tuple[float, float]]] = {"openenv": [], "rolloutgym": []}
    try:
        for _ in range(repeats):
            sequential["openenv"].append(openenv_sequential(theirs_url, episodes))
            sequential["rolloutgym"].append(openenv_sequential(ours_url, recorded))
            concurrent_runs["openenv"].append(openenv_concurrent(theirs_url, sessions, None, process.pid))
            concurrent_runs["rolloutgym"].append(openenv_concurrent(ours_url, sessions, recorded, server.pid))
    finally:
        process.terminate()
        process.wait()
        server.stop()
    print(f"OpenEnv's own server (openenv-core, create_app + uvicorn) vs rolloutgym's OpenEnv route ({load()}):")
    print("  same bare websockets client speaking OpenEnv's messages, one session per connection")
    for name, local in (("openenv", in_process), ("rolloutgym", ours_in_process)):
        best = min(sequential[name])
        per_call = min(run[0] for run in concurrent_runs[name])
        memory = concurrent_runs[name][0][1]  # the fresh server's first run
        print(
            f"  {name:<10} sequential {best:7.1f} µs per call (in process {local:.1f}, added {best - local:.1f}); "
            f"{sessions} sessions at once: {per_call:.1f} µs per call, "
            f"{memory / 1024:.1f} KiB server memory per session"
        )


def steps_openenv_route(url: str, episodes: list[tuple[int, int, list[Any]]]) -> list[float]:
    """Seconds per step (resets not timed) of ``episodes`` over one WebSocket to the OpenEnv route."""
    import json

    from websockets.sync.client import connect

    times = []
    with connect(url, compression=None, max_size=None) as connection:
        for task, seed, actions in episodes:
            connection.send(json.dumps({"type": "reset", "data": {"seed": seed, "task": task}}))
            connection.recv()
            for action in actions:
                started = time.perf_counter()
                connection.send(json.dumps({"type": "step", "data": action}))
                answer = json.loads(connection.recv())["data"]
                times.append(time.perf_counter() - started)
            assert answer["reward"] == 1.0 and answer["done"], answer
    return times


def steps_http_route(base_url: str, episodes: list[tuple[int, int, list[Any]]]) -> list[float]:
    """Seconds per step (resets not timed) of ``episodes`` through rolloutgym's own HTTP route (``/sessions``)."""
    times = []
    with httpx.Client(base_url=base_url, timeout=60) as client:
        for task, seed, actions in episodes:
            session = client.post("/sessions", json={"env": GUESS, "task": task, "reset": {"seed": seed}}).json()[
                "session"
            ]
            for action in actions:
                started = time.perf_counter()
                answer = client.post(f"/sessions/{session}/step", json={"action": action}).json()
                times.append(time.perf_counter() - started)
            client.delete(f"/sessions/{session}")
            assert answer["reward"] == 1.0, answer
    return times


def steps_ors(base_url: str, episodes: list[tuple[int, int, list[Any]]]) -> list[float]:
    """Seconds per tool call (sessions not timed) of ``episodes`` through the ``openreward`` SDK's sessions."""
    from openreward import OpenReward
    from openreward.api.environments.types import Task

    client = OpenReward(api_key="")
    environment = client.environments.get(name="rolloutgym", variant=GUESS, base_url=base_url)
    times = []
    for task, _, actions in episodes:
        spec = Task(server_name="rolloutgym", environment_name=GUESS, task_spec={"index": task}, namespace=None)
        with environment.session(task=spec) as session:
            for action in actions:
                call = action["tool_calls"][0]
                started = time.perf_counter()
                output = session.call_tool(call["name"], call["arguments"])
                times.append(time.perf_counter() - started)
            assert output.reward == 1.0 and output.finished, output
    return times


def ors(server: ServerProcess, episodes: int, repeats: int) -> None:
    """ORS step latency (the openreward SDK) against the OpenEnv route: same server, same env, same actions."""
    try:
        import openreward  # noqa: F401
    except ImportError:
        print("ORS: not measured (no openreward SDK here: pip install --no-deps openreward==0.1.167, see dev_install)")
        return
    recorded = recorded_episodes(episodes)
    route = server.url(GUESS).replace("http", "ws") + "/ws"
    medians: dict[str, list[float]] = {"openenv": [], "http": [], "ors": []}
    for _ in range(repeats):  # alternated, best median of the repeats
        medians["openenv"].append(statistics.median(steps_openenv_route(route, recorded)) * 1e6)
        medians["http"].append(statistics.median(steps_http_route(server.base_url, recorded)) * 1e6)
        medians["ors"].append(statistics.median(steps_ors(server.base_url, recorded)) * 1e6)
    openenv_best, http_best, ors_best = (min(medians[name]) for name in ("openenv", "http", "ors"))
    steps = sum(len(actions) for _, _, actions in recorded)
    print(f"ORS against the OpenEnv route, {GUESS}, {steps} steps per run, best median of {repeats} ({load()}):")
    print(f"  OpenEnv route (WebSocket)       {openenv_best:8.1f} µs per step")
    print(f"  rolloutgym HTTP (/sessions)     {http_best:8.1f} µs per step = {http_best / openenv_best:.2f}x")
    print(f"  ORS (openreward SDK, HTTP+SSE)  {ors_best:8.1f} µs per tool call = {ors_best / openenv_best:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--openenv-python", help="a Python with openenv-core installed (default: this one, if it has)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["per-step", "concurrent", "openenv", "ors"])
    arguments = parser.parse_args()
    openenv_python = arguments.openenv_python
    if openenv_python is None:
        import importlib.util
        import sys

        openenv_python = sys.executable if importlib.util.find_spec("openenv") else None
    with ServerProcess(
        [GUESS, REFUND],
        [
            "--max-sessions",
            str(2 * arguments.sessions + 100),
            "--max-sessions-per-owner",
            str(2 * arguments.sessions + 100),
            "--log-level",
            "warning",
        ],
    ) as server:
        if "per-step" not in arguments.skip:
            per_step(server, arguments.episodes, arguments.repeats)
        if "concurrent" not in arguments.skip:
            concurrent(server, arguments.sessions, arguments.repeats)
        if "ors" not in arguments.skip:
            ors(server, min(arguments.episodes, 60), arguments.repeats)
        if "openenv" not in arguments.skip:
            if openenv_python is None:
                print("OpenEnv: not measured (no openenv-core here; pass --openenv-python PY)")
            else:
                openenv(openenv_python, arguments.episodes, arguments.sessions, arguments.repeats)


if __name__ == "__main__":
    main()
