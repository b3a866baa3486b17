"""The rollout platform (``rolloutgym platform serve``) against local runs: what the platform costs.

* **remote vs local**: about 1,000 oracle rollouts of ``toy/arith-v0`` and of
  ``workflow/refund-v1``, as ``rolloutgym run`` does them *in this process* (``rolloutgym.run``,
  the function the command calls, into a run file) and as a remote run does them (queued
  through the API, which wakes the idle worker process that claims it, written to the run file,
  followed to its end): ``Client.run_to_end`` (queued and followed in one request),
  ``Client.follow_run`` (one streamed request: what ``rolloutgym run --remote`` does) and
  ``create_run`` + ``wait_run`` (two requests); prints the wall times and the ratios (target:
  remote <= 1.1x). Each side is warmed up first (imports, the env's first build), then the
  best of ``--repeats`` alternating runs is kept.
* **the same as commands** (``--cli``): ``rolloutgym run ENV --policy oracle -n N --out F`` against
  ``rolloutgym run ENV --remote --policy oracle -n N`` as subprocesses (best of ``--repeats``):
  both include Python's start and the imports (a second or more), which dwarf the platform's cost.
* **API latency**: ``--clients`` (100) concurrent clients, each sending ``--requests`` GETs of
  a run (``Client.get_run``'s request) over its own connection; p50, p99 and requests/s. The
  clients are built before the clock starts: building an ``httpx.AsyncClient`` costs tens of ms
  of CPU (an SSL context, even for http://), and 100 of them built inside the timed gather held
  the load generator's event loop while the first requests of the others were being timed (the
  p99 of 39.8 s first measured here). Each client's first request opens its connection, and is
  timed.
* **database bytes per 10,000 trajectories**: the growth of the database (SQLite file + WAL
  after a checkpoint, or ``pg_database_size``) over runs totalling 10,000 trajectories, next
  to the run files' bytes for them (the trajectories live in the run files, not the database).
* **listing 10,000 runs**: 10,000 run rows inserted, then ``Client.list_runs(limit=10_000)``
  through the API (best of 3).

Run: ``python benchmarks/platform_loop.py [--repeats 3] [--clients 100] [--requests 20] [--database URL]``;
``--postgres-temp`` initdbs and starts a private PostgreSQL cluster on 127.0.0.1 in the temp folder
(:mod:`rolloutgym_testing.postgres`, as the tests do; Debian's ``postgresql`` package) and runs on it
(needs rolloutgym-platform and rolloutgym-workflow). The load average is printed: the
figures move with it on a shared machine. ``--quick`` runs a small version (CI smoke test).
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named like the standard library's ``platform`` module, which uuid (and so pydantic) imports:
# run as a script, its folder would come first on sys.path and shadow it.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import contextlib  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402
import rolloutgym as rg  # noqa: E402
from rolloutgym import Client  # noqa: E402
from rolloutgym.sources import resolve_env  # noqa: E402
from rolloutgym_platform import db  # noqa: E402

ENVS = ("toy/arith-v0", "workflow/refund-v1")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_platform(data: Path, database: str | None, workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [sys.executable, "-m", "rolloutgym", "platform", "serve", "--data", str(data), "--port", str(port)]
    command += ["--workers", str(workers)] + (["--database", database] if database else [])
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the platform did not start")


def wait_run(client: Client, run_id: str) -> dict[str, Any]:
    run = client.wait_run(run_id)  # long-polls, as the CLI's progress bar does
    if run["state"] != "succeeded":
        raise SystemExit(f"run {run_id} {run['state']}: {run['error']}")
    return run


def remote_seconds(client: Client, env: str, n: int, limit: int | None, how: str = "run_to_end") -> tuple[float, int]:
    """A remote run's wall time: queued and followed to its end in one request (``run_to_end``), in one streamed
    request (``follow``: ``Client.follow_run``, what ``rolloutgym run --remote`` does), or ``create_run`` then
    ``wait_run`` (``two``)."""
    started = time.perf_counter()
    if how == "run_to_end":
        run = client.run_to_end(env, "oracle", n, limit=limit)
    elif how == "follow":
        *_, run = client.follow_run(env, "oracle", n, progress=False, limit=limit)
    else:
        run = client.wait_run(client.create_run(env_slug=env, model="oracle", n=n, limit=limit)["runId"])
    if run["state"] != "succeeded":
        raise SystemExit(f"run {run['runId']} {run['state']}: {run['error']}")
    return time.perf_counter() - started, run["trajectories"]


def local_seconds(env: str, n: int, limit: int | None, folder: Path) -> tuple[float, int]:
    out = folder / f"local-{time.perf_counter_ns()}.jsonl"
    started = time.perf_counter()
    result = rg.run(env, policy="oracle", num_rollouts=n, limit=limit, out=out)
    return time.perf_counter() - started, result.summary.num_trajectories


def overhead(client: Client, folder: Path, rollouts: int, repeats: int) -> None:
    print(f"remote vs local, about {rollouts} oracle rollouts per run (best of {repeats}):")
    for env in ENVS:
        client.push(env)
        tasks = len(resolve_env(env).task_ids)
        n = max(1, round(rollouts / tasks))
        local_seconds(env, 1, 2, folder)  # warm-up: imports and the env's first build, on both sides
        for how in ("run_to_end", "follow", "two"):
            remote_seconds(client, env, 1, 2, how)
        local, remote, follow, two = [], [], [], []
        for _ in range(repeats):
            seconds, count = local_seconds(env, n, None, folder)
            local.append(seconds)
            seconds, remote_count = remote_seconds(client, env, n, None)
            remote.append(seconds)
            assert count == remote_count, (count, remote_count)
            follow.append(remote_seconds(client, env, n, None, "follow")[0])
            two.append(remote_seconds(client, env, n, None, "two")[0])
        print(
            f"  {env}: {count} rollouts ({tasks} tasks x {n}); local in-process {min(local):.3f} s; remote "
            f"run_to_end {min(remote):.3f} s: {min(remote) / min(local):.2f}x; follow_run (the CLI's stream) "
            f"{min(follow):.3f} s: {min(follow) / min(local):.2f}x; create_run + wait_run "
            f"{min(two):.3f} s: {min(two) / min(local):.2f}x"
        )


def cli_overhead(url: str, key: str, folder: Path, rollouts: int, repeats: int) -> None:
    """``rolloutgym run`` against ``rolloutgym run --remote``, each a fresh process (best of ``repeats``)."""
    environment = dict(os.environ, ROLLOUTGYM_ENDPOINT=url, ROLLOUTGYM_API_KEY=key, HOME=str(folder))
    print(f"the same as commands, subprocesses (best of {repeats}):")
    for env in ENVS:
        n = max(1, round(rollouts / len(resolve_env(env).task_ids)))
        base = [sys.executable, "-m", "rolloutgym", "run", env, "--policy", "oracle", "-n", str(n), "--quiet"]
        timings: dict[str, list[float]] = {"local": [], "remote": []}
        for index in range(repeats):
            out = folder / f"cli-{env.replace('/', '_')}-{index}.jsonl"
            for side, extra in (("local", ["--out", str(out)]), ("remote", ["--remote"])):
                started = time.perf_counter()
                answer = subprocess.run(base + extra, env=environment, capture_output=True, text=True)
                timings[side].append(time.perf_counter() - started)
                if answer.returncode != 0:
                    raise SystemExit(f"{' '.join(base + extra)} failed: {answer.stderr.strip()[-500:]}")
        local, remote = min(timings["local"]), min(timings["remote"])
        print(f"  {env}: rolloutgym run {local:.2f} s, rolloutgym run --remote {remote:.2f} s: {remote / local:.2f}x")


async def _latency(url: str, key: str, run_id: str, clients: int, requests: int) -> list[float]:
    headers = {"Authorization": f"Bearer {key}"}
    timings: list[float] = []
    started = time.perf_counter()
    https = [httpx.AsyncClient(base_url=url, headers=headers, timeout=120) for _ in range(clients)]
    print(f"  ({clients} httpx clients built in {time.perf_counter() - started:.2f} s, before the clock starts)")

    async def one_client(http: httpx.AsyncClient) -> None:
        async with http:
            for _ in range(requests):
                started = time.perf_counter()
                answer = await http.get(f"/api/runs/{run_id}")
                timings.append(time.perf_counter() - started)
                answer.raise_for_status()

    started = time.perf_counter()
    await asyncio.gather(*(one_client(http) for http in https))
    timings.append(-(time.perf_counter() - started))  # the total, marked negative
    return timings


def latency(url: str, key: str, run_id: str, clients: int, requests: int) -> None:
    timings = asyncio.run(_latency(url, key, run_id, clients, requests))
    total = -timings.pop()
    timings.sort()
    p50 = statistics.median(timings)
    p99 = timings[min(len(timings) - 1, int(len(timings) * 0.99))]
    print(
        f"API latency, {clients} concurrent clients x {requests} GET /api/runs/ID: p50 {p50 * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms, {len(timings) / total:.0f} requests/s"
    )


def database_bytes(data: Path, database: str | None) -> int:
    if database:
        from sqlalchemy import text

        engine = db.make_engine(db.database_url(data, database))
        with engine.connect() as connection:
            size = connection.execute(text("SELECT pg_database_size(current_database())")).scalar()
        engine.dispose()
        return int(size)
    import sqlite3

    connection = sqlite3.connect(data / "platform.db")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return sum(path.stat().st_size for path in data.glob("platform.db*"))


def bytes_per_trajectories(client: Client, data: Path, database: str | None, trajectories: int) -> None:
    before = database_bytes(data, database)
    files_before = sum(path.stat().st_size for path in (data / "runs").rglob("*.jsonl"))
    runs = 0
    total = 0
    while total < trajectories:
        n = min(100, (trajectories - total) // 40 or 1)
        run = wait_run(client, client.create_run(env_slug="toy/arith-v0", model="oracle", n=n)["runId"])
        total += run["trajectories"]
        runs += 1
    grown = database_bytes(data, database) - before
    files = sum(path.stat().st_size for path in (data / "runs").rglob("*.jsonl")) - files_before
    scale = 10_000 / total
    print(
        f"database bytes per 10,000 trajectories: {grown * scale:,.0f} ({runs} runs of {total} trajectories; the "
        f"run files hold the trajectories: {files * scale / 1e6:.1f} MB per 10,000)"
    )


def listing(client: Client, data: Path, database: str | None, count: int) -> None:
    from rolloutgym_platform.models import RunRow

    sessions = db.open_database(data, database)
    with sessions() as session:
        template = session.query(RunRow).first()
    rows = [
        {
            "id": db.new_id("run"),
            "org": template.org,
            "env_slug": template.env_slug,
            "env_version_id": template.env_version_id,
            "policy": "oracle",
            "n": 1,
            "options": {},
            "state": "succeeded",
            "attempts": 1,
            "done": 1,
            "passes": 1,
            "trajectories": 1,
            "errors": 0,
            "pass_rate": 1.0,
        }
        for _ in range(count)
    ]
    before = database_bytes(data, database)
    with sessions.begin() as session:
        session.execute(RunRow.__table__.insert(), rows)
    sessions.kw["bind"].dispose()
    per_row = (database_bytes(data, database) - before) / count
    print(f"database bytes per run row: {per_row:,.0f} (a run's trajectories are in its run file, not the database)")
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        listed = client.list_runs(limit=count)
        best = min(best, time.perf_counter() - started)
    print(f"listing {len(listed):,} runs through the API: {best:.2f} s (best of 3)")


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--trajectories", type=int, default=10_000)
    parser.add_argument("--list", type=int, default=10_000, dest="list_count")
    parser.add_argument("--database", default=None, help="postgresql://... (default: SQLite in a temp folder)")
    parser.add_argument(
        "--postgres-temp",
        action="store_true",
        help="Start a private PostgreSQL cluster (initdb, 127.0.0.1) in the temp folder and run on it.",
    )
    parser.add_argument("--cli", action="store_true", help="Also compare the commands, as subprocesses.")
    parser.add_argument("--quick", action="store_true", help="A small version (CI smoke test).")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.rollouts, arguments.repeats, arguments.clients, arguments.requests = 80, 1, 10, 5
        arguments.trajectories, arguments.list_count = 400, 500
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (/proc/loadavg: {_loadavg()})")
    with tempfile.TemporaryDirectory(prefix="rolloutgym-platform-bench-") as folder, contextlib.ExitStack() as stack:
        if arguments.postgres_temp:
            from rolloutgym_testing.postgres import PostgresCluster

            arguments.database = stack.enter_context(PostgresCluster.start(Path(folder) / "postgres")).new_database()
        print(f"database: {arguments.database or 'SQLite in the data folder'}")
        data = Path(folder) / "data"
        key = db.create_key(db.open_database(data, arguments.database), name="bench", scopes=["run", "push", "train"])
        process, url = start_platform(data, arguments.database, workers=1)
        try:
            with Client(url, key) as client:
                overhead(client, Path(folder), arguments.rollouts, arguments.repeats)
                if arguments.cli:
                    cli_overhead(url, key, Path(folder), arguments.rollouts, arguments.repeats)
                run_id = client.list_runs(limit=1)[0]["runId"]
                latency(url, key, run_id, arguments.clients, arguments.requests)
                bytes_per_trajectories(client, data, arguments.database, arguments.trajectories)
                listing(client, data, arguments.database, arguments.list_count)
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"load average {os.getloadavg()[0]:.1f} at the end (/proc/loadavg: {_loadavg()})")


if __name__ == "__main__":
    main()
