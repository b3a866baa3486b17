"""``rolloutgym serve`` over plain HTTP: what a ``RemoteEnv`` costs its client, against a bare HTTP floor.

Three figures, each measured in this run against its floor, CPU (``process_time`` of this,
the client, process; the server's from ``/proc``) and wall clock, on loopback:

* **open**: ``rg.make(URL)`` + ``close()`` (a ``POST /sessions`` and a ``DELETE``) against
  the same two requests on one kept-alive ``http.client`` connection;
* **episode**: a whole ``toy/guess-v0`` oracle episode (open, reset, the recorded steps,
  close) through ``RemoteEnv`` against the same requests and bodies sent by ``http.client``
  (the floor: no client library, no session object; JSON with ``json``);
* **per call**: reset/step calls of open sessions, ``RemoteEnv`` against ``http.client``.

Run: ``python benchmarks/serve_http.py [--episodes 100] [--repeats 3]``. Rounds alternate
rolloutgym and the floor; the best round of each is printed with the load average.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import time
from typing import Any
from urllib.parse import urlsplit

import rolloutgym as rg
from rolloutgym.serve import ServerProcess

GUESS = "toy/guess-v0"


def recorded(count: int) -> list[tuple[int, int, list[Any]]]:
    """(task, seed, oracle actions) of ``count`` in-process episodes."""
    episodes = []
    for index in range(count):
        environment = rg.make(GUESS, task=index % 30)
        environment.reset(seed=index)
        actions, done = [], False
        while not done:
            action = environment.oracle_action()
            actions.append(action)
            _, _, terminated, truncated, _ = environment.step(action)
            done = terminated or truncated
        environment.close()
        episodes.append((index % 30, index, actions))
    return episodes


class Bare:
    """The floor: one kept-alive ``http.client`` connection, JSON bodies by ``json``."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port)
        self.headers = {"content-type": "application/json"}

    def request(self, method: str, path: str, body: Any = None) -> Any:
        payload = json.dumps(body) if body is not None else None
        self.connection.request(method, path, body=payload, headers=self.headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
        return json.loads(data)


def cpu_wall(function: Any) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    function()
    return time.process_time() - cpu, time.perf_counter() - wall


def server_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ours_episodes(url: str, episodes: list[tuple[int, int, list[Any]]], steps: bool) -> None:
    for task, seed, actions in episodes:
        environment = rg.make(url, task=task)
        if steps:
            environment.reset(seed=seed)
            for action in actions:
                environment.step(action)
        environment.close()


def bare_episodes(base_url: str, episodes: list[tuple[int, int, list[Any]]], steps: bool) -> None:
    bare = Bare(base_url)
    for task, seed, actions in episodes:
        session = bare.request("POST", "/sessions", {"env": GUESS, "task": task, "kwargs": None})["session"]
        if steps:
            bare.request("POST", f"/sessions/{session}/reset", {"seed": seed, "options": None})
            for action in actions:
                bare.request("POST", f"/sessions/{session}/step", {"action": action})
        bare.request("DELETE", f"/sessions/{session}")
    bare.connection.close()


def ours_calls(url: str, episodes: list[tuple[int, int, list[Any]]]) -> float:
    environments = [rg.make(url, task=task) for task, _, _ in episodes]
    cpu = time.process_time()
    for environment, (_, seed, actions) in zip(environments, episodes, strict=True):
        environment.reset(seed=seed)
        for action in actions:
            environment.step(action)
    cpu = time.process_time() - cpu
    for environment in environments:
        environment.close()
    return cpu


def bare_calls(base_url: str, episodes: list[tuple[int, int, list[Any]]]) -> float:
    bare = Bare(base_url)
    sessions = [
        bare.request("POST", "/sessions", {"env": GUESS, "task": task, "kwargs": None})["session"]
        for task, _, _ in episodes
    ]
    cpu = time.process_time()
    for session, (_, seed, actions) in zip(sessions, episodes, strict=True):
        bare.request("POST", f"/sessions/{session}/reset", {"seed": seed, "options": None})
        for action in actions:
            bare.request("POST", f"/sessions/{session}/step", {"action": action})
    cpu = time.process_time() - cpu
    for session in sessions:
        bare.request("DELETE", f"/sessions/{session}")
    bare.connection.close()
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    episodes = recorded(args.episodes)
    calls = sum(1 + len(actions) for _, _, actions in episodes)
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    with ServerProcess([GUESS]) as server:
        url, base = server.url(GUESS), server.base_url
        assert server.process is not None
        pid = server.process.pid
        ours_episodes(url, episodes[:2], True)  # warm both sides (imports, first session)
        bare_episodes(base, episodes[:2], True)
        figures: dict[str, list[tuple[float, float, float]]] = {}
        runs = {
            "open+close, rolloutgym": lambda: ours_episodes(url, episodes, False),
            "open+close, http.client": lambda: bare_episodes(base, episodes, False),
            "episode, rolloutgym": lambda: ours_episodes(url, episodes, True),
            "episode, http.client": lambda: bare_episodes(base, episodes, True),
        }
        per_call: dict[str, list[float]] = {"rolloutgym": [], "http.client": []}
        for _ in range(args.repeats):
            for name, function in runs.items():
                before = server_cpu(pid)
                cpu, wall = cpu_wall(function)
                figures.setdefault(name, []).append((cpu, wall, server_cpu(pid) - before))
            per_call["rolloutgym"].append(ours_calls(url, episodes))
            per_call["http.client"].append(bare_calls(base, episodes))
    print(f"rolloutgym serve over HTTP, {args.episodes} {GUESS} episodes, {calls} reset/step calls")
    print(f"best of {args.repeats}, load average {load} at the start")
    count = args.episodes
    for name, values in figures.items():
        cpu, wall, served = (min(column) for column in zip(*values, strict=True))
        print(
            f"  {name:<26} client CPU {cpu / count * 1e3:7.2f} ms, wall {wall / count * 1e3:7.2f} ms, "
            f"server CPU {served / count * 1e3:6.2f} ms per episode"
        )
    for kind in ("open+close", "episode"):
        ours = min(value[0] for value in figures[f"{kind}, rolloutgym"])
        floor = min(value[0] for value in figures[f"{kind}, http.client"])
        print(f"  {kind}: rolloutgym client CPU = {ours / floor:.2f}x the http.client floor")
    ours, floor = min(per_call["rolloutgym"]), min(per_call["http.client"])
    print(
        f"  per reset/step call, client CPU: rolloutgym {ours / calls * 1e6:.0f} µs, "
        f"http.client {floor / calls * 1e6:.0f} µs = {ours / floor:.2f}x"
    )
    print(f"load average at the end: {' '.join(f'{value:.1f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
