"""``rolloutgym serve`` against in-process envs, on loopback: what the network costs.

* **per-step overhead**: the same ``toy/guess-v0`` oracle episodes (actions recorded once
  in process, then replayed) in process, through ``RemoteEnv`` (HTTP) and through
  ``AsyncRemoteEnv`` (WebSocket); prints µs per call (reset or step) and the added µs
  (target: WebSocket adds at most 200 µs per step).
* **concurrent sessions**: ``--sessions`` (1,000) members of ``workflow/refund-v0`` with the
  oracle, all in flight at once, through ``arollout_group`` in process and with
  ``AsyncRemoteEnv`` sessions on one server; prints episodes/s and the ratio
  (target: remote >= 0.5x), plus the server's memory per open session (RSS with the
  sessions open, reset, minus RSS before).

Run: ``python benchmarks/serve.py [--episodes 200] [--sessions 1000]`` (needs ``rolloutgym[serve]``).
The server is a separate process (``rolloutgym serve``) on 127.0.0.1.
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


def replay_local(episodes: list[tuple[int, int, list[Any]]]) -> tuple[float, int]:
    environments = [rg.make(GUESS, task=task) for task, _, _ in episodes]
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


def replay_http(url: str, episodes: list[tuple[int, int, list[Any]]]) -> tuple[float, int]:
    environments = [RemoteEnv(url, task=task) for task, _, _ in episodes]
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


ECHO_SERVER = """
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


def echo_round_trip(calls: int) -> float:
    """µs per round trip of a bare websockets echo server (another process): this machine's transport floor."""
    import json
    import subprocess
    import sys

    from rolloutgym.serve import free_port
    from websockets.asyncio.client import connect

    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", ECHO_SERVER, str(port)])
    message = json.dumps(
        {
            "op": "step",
            "action": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "call_0", "name": "guess", "arguments": {"number": 25}}],
            },
        }
    )

    async def measure() -> float:
        for _ in range(100):
            try:
                connection = await connect(f"ws://127.0.0.1:{port}", compression=None, proxy=None)
                break
            except OSError:
                await asyncio.sleep(0.1)
        started = time.perf_counter()
        for _ in range(calls):
            await connection.send(message)
            await connection.recv()
        elapsed = time.perf_counter() - started
        await connection.close()
        return elapsed / calls * 1e6

    try:
        return asyncio.run(measure())
    finally:
        process.terminate()
        process.wait()


def per_step(server: ServerProcess, episodes: int, repeats: int) -> None:
    recorded = recorded_episodes(episodes)
    url = server.url(GUESS)
    results: dict[str, list[float]] = {"in-process": [], "http": [], "websocket": []}
    for _ in range(repeats):
        for name, function in (
            ("in-process", lambda: replay_local(recorded)),
            ("http", lambda: replay_http(url, recorded)),
            ("websocket", lambda: replay_ws(url, recorded)),
        ):
            elapsed, calls = function()
            results[name].append(elapsed / calls * 1e6)
    local = min(results["in-process"])
    print(
        f"per-step overhead ({episodes} toy/guess-v0 episodes, {sum(1 + len(a) for _, _, a in recorded)} calls, best of {repeats}):"
    )
    for name, values in results.items():
        best = min(values)
        extra = "" if name == "in-process" else f"   added {best - local:8.1f} µs per call"
        print(f"  {name:<11} {best:8.1f} µs per call (median {statistics.median(values):.1f}){extra}")
    added = min(results["websocket"]) - local
    floor = min(echo_round_trip(sum(1 + len(a) for _, _, a in recorded)) for _ in range(repeats))
    print(f"  bare websockets echo (no env, no rolloutgym): {floor:.1f} µs per round trip on this machine now")
    print(
        f"  websocket added {added:.0f} µs per step (target <= 200 µs): {'met' if added <= 200 else 'NOT met'}; beyond the bare transport: {added - floor:.0f} µs"
    )


def concurrent(server: ServerProcess, sessions: int) -> None:
    registry = rg.get_registry()
    items = registry.tasks(REFUND)
    oracle = registry.make_policy("oracle")
    url = server.url(REFUND)
    ids = {id(item): index for index, item in enumerate(items)}

    async def run_local() -> float:
        started = time.perf_counter()
        group = await arollout_group(
            items[0], lambda item: registry.make(REFUND, task=item), oracle, num_rollouts=sessions, seed=0
        )
        elapsed = time.perf_counter() - started
        assert not group.errors and min(group.rewards) == 1.0, group.errors[:1]
        return elapsed

    async def run_remote() -> float:
        started = time.perf_counter()
        group = await arollout_group(
            items[0], lambda item: AsyncRemoteEnv.open(url, task=ids[id(item)]), oracle, num_rollouts=sessions, seed=0
        )
        elapsed = time.perf_counter() - started
        assert not group.errors and min(group.rewards) == 1.0, group.errors[:1]
        return elapsed

    async def memory() -> tuple[int, int]:
        def resident() -> int:
            return int(httpx.get(f"{server.base_url}/metrics?format=json").json()["process_resident_bytes"])

        before = resident()
        environments = await asyncio.gather(
            *(AsyncRemoteEnv.open(url, task=index % len(items)) for index in range(sessions))
        )
        await asyncio.gather(*(environment.reset(seed=index) for index, environment in enumerate(environments)))
        during = resident()
        await asyncio.gather(*(environment.close() for environment in environments))
        return before, during

    local = asyncio.run(run_local())
    remote = asyncio.run(run_remote())
    before, during = asyncio.run(memory())
    print(f"{sessions} concurrent {REFUND} oracle episodes:")
    print(f"  in-process arollout_group  {sessions / local:8.1f} episodes/s ({local:.2f} s)")
    print(f"  remote (WebSocket)         {sessions / remote:8.1f} episodes/s ({remote:.2f} s)")
    ratio = local / remote
    print(f"  ratio remote / in-process  {ratio:.2f}x (target >= 0.5x): {'met' if ratio >= 0.5 else 'NOT met'}")
    print(
        f"  server memory: {before / 2**20:.0f} MiB idle, {during / 2**20:.0f} MiB with {sessions} open sessions = {(during - before) / sessions / 1024:.1f} KiB per session"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    with ServerProcess(
        [GUESS, REFUND], ["--max-sessions", str(2 * arguments.sessions + 100), "--log-level", "warning"]
    ) as server:
        per_step(server, arguments.episodes, arguments.repeats)
        concurrent(server, arguments.sessions)


if __name__ == "__main__":
    main()
