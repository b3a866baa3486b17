"""Faults of the platform's queue, on a real platform (SQLite) with real worker processes:

* a worker that lost its lease (stalled with SIGSTOP past it, then resumed) never writes into the run file or the
  row that another worker now holds, so no rollout is counted twice;
* the whole platform killed (API and workers, SIGKILL) and started again: the running run continues from its
  finished groups and the queued one runs, with no rollout lost or counted twice.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from rolloutgym import Client

LEASE = 4.0


def _worker(data: Path, env: dict[str, str]) -> subprocess.Popen:
    command = [sys.executable, "-m", "rolloutgym_platform.worker", "--data", str(data), "--lease", str(LEASE)]
    return subprocess.Popen(command, env=dict(os.environ, **env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _key(data: Path) -> str:
    from rolloutgym_platform import db

    sessions = db.open_database(data)
    key = db.create_key(sessions, name="all", scopes=["run", "push", "train"], org="acme")
    sessions.kw["bind"].dispose()
    return key


def _until(client: Client, run_id: str, test, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get_run(run_id)
        if test(run):
            return run
        if run["state"] == "failed":
            raise AssertionError(run)
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never reached the state wanted: {run}")


def _task_indices(path: Path) -> list[int]:
    lines = path.read_text().splitlines()[1:]
    return [json.loads(line)["task_index"] for line in lines if line.strip()]


def _stop_outside_a_write(process: subprocess.Popen, database: Path) -> None:
    """SIGSTOP the worker at a moment it holds no SQLite write lock (a stalled writer would stall everyone)."""
    for _ in range(50):
        process.send_signal(signal.SIGSTOP)
        probe = sqlite3.connect(database, timeout=0.5)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            return
        except sqlite3.OperationalError:
            process.send_signal(signal.SIGCONT)
            time.sleep(0.05)
        finally:
            probe.close()
    raise AssertionError("the worker never left its database write")


def test_a_worker_that_lost_its_lease_does_not_write_twice(servers, slow_plugin, tmp_path) -> None:
    data = tmp_path / "data"
    key = _key(data)
    server = servers.start(data, workers=0, lease=LEASE, env=slow_plugin)  # the API only: the test runs the workers
    stalled = resumed = None
    try:
        with Client(server.url, key) as client:
            client.push("slowtest/arith-v0")
            run_id = client.create_run(env_slug="slowtest/arith-v0", model="oracle", n=1, limit=12, concurrency=1)[
                "runId"
            ]
            stalled = _worker(data, slow_plugin)
            _until(client, run_id, lambda run: run["done"] >= 2)
            _stop_outside_a_write(stalled, data / "platform.db")
            time.sleep(LEASE + 1.5)  # its lease runs out while it is stopped
            resumed = _worker(data, slow_plugin)
            finished = _until(client, run_id, lambda run: run["state"] == "succeeded")
            recorded = client.download_run(run_id, tmp_path / "recorded.jsonl").read_bytes()
            stalled.send_signal(signal.SIGCONT)  # the stalled worker wakes up in the middle of its group
            time.sleep(LEASE)
            after = client.get_run(run_id)
            assert client.download_run(run_id, tmp_path / "after.jsonl").read_bytes() == recorded
    finally:
        for process in (stalled, resumed):
            if process is not None:
                process.send_signal(signal.SIGCONT)
                process.kill()
                process.wait()
        server.stop()
    assert finished["attempts"] >= 2 and finished["trajectories"] == 12 and finished["done"] == 12
    assert {key: after[key] for key in ("state", "trajectories", "done", "passes")} == {
        key: finished[key] for key in ("state", "trajectories", "done", "passes")
    }
    indices = _task_indices(tmp_path / "recorded.jsonl")
    assert sorted(indices) == sorted(set(indices)) and len(indices) == 12
    first_attempt = data / "runs" / "acme" / f"{run_id}.jsonl"
    assert not first_attempt.exists() or first_attempt.read_bytes() != recorded  # it wrote only into its own file


def test_platform_killed_and_restarted_recovers_running_and_queued_work(servers, slow_plugin, tmp_path) -> None:
    data = tmp_path / "data"
    key = _key(data)
    server = servers.start(data, workers=1, lease=LEASE, env=slow_plugin, new_session=True)
    try:
        with Client(server.url, key) as client:
            client.push("slowtest/arith-v0")
            client.push("toy/arith-v0")
            running = client.create_run(env_slug="slowtest/arith-v0", model="oracle", n=2, limit=10, concurrency=1)
            queued = client.create_run(env_slug="toy/arith-v0", model="oracle", n=2, limit=3)
            _until(client, running["runId"], lambda run: run["done"] >= 2)
    finally:
        os.killpg(server.process.pid, signal.SIGKILL)  # the API and its workers, all at once
        server.process.wait()
    before = (data / "runs" / "acme" / f"{running['runId']}.jsonl").read_text()
    written = [line for line in before.splitlines(keepends=True)[1:] if line.endswith("\n")]
    assert 2 <= len(written) < 10  # killed mid-run

    server = servers.start(data, workers=2, lease=LEASE, env=slow_plugin)
    try:
        with Client(server.url, key) as client:
            first = _until(client, running["runId"], lambda run: run["state"] == "succeeded")
            second = _until(client, queued["runId"], lambda run: run["state"] == "succeeded")
            final = client.download_run(running["runId"], tmp_path / "final.jsonl")
    finally:
        server.stop()
    assert first["attempts"] >= 2 and first["trajectories"] == 20 and first["passRate"] == 1.0
    assert second["trajectories"] == 6
    indices = _task_indices(final)
    assert sorted(indices) == list(range(10))  # every task once: none lost, none run twice
    kept = final.read_text()
    assert all(line in kept for line in written)  # the groups finished before the kill were kept, not re-run
