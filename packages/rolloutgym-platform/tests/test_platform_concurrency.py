"""Concurrency: 100 runs queued at once by 10 clients (threads) all complete, on SQLite and on PostgreSQL, with
every run's counts right (the database is never corrupted: SQLite in WAL mode, or PostgreSQL)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from rolloutgym import Client


def test_100_runs_queued_at_once_by_10_clients_complete(platform_server) -> None:
    def queue_ten(_client_number: int) -> list[str]:
        with Client(platform_server.url, platform_server.keys["all"]) as client:
            return [
                client.create_run(env_slug="toy/arith-v0", model="oracle", n=1, limit=1)["runId"] for _ in range(10)
            ]

    with Client(platform_server.url, platform_server.keys["all"]) as client:
        client.push("toy/arith-v0")
        with ThreadPoolExecutor(10) as pool:
            run_ids = [run_id for ten in pool.map(queue_ten, range(10)) for run_id in ten]
        assert len(set(run_ids)) == 100
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            runs = {run["runId"]: run for run in client.list_runs(limit=10_000) if run["runId"] in run_ids}
            if all(run["state"] not in ("queued", "running") for run in runs.values()):
                break
            time.sleep(0.5)
    assert len(runs) == 100
    assert {run["state"] for run in runs.values()} == {"succeeded"}
    assert all(run["trajectories"] == 1 and run["passRate"] == 1.0 and run["attempts"] == 1 for run in runs.values())
