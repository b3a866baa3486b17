"""Wake-ups instead of polling, on a real platform (SQLite) on 127.0.0.1 whose poll interval is 60 s.

* Queuing a run wakes the idle worker, and the worker's report of its end answers the client waiting on the run
  (``Client.wait_run``, a long-poll): the run is done in far less than the 60 s either side would otherwise wait.
* ``GET /api/runs/ID/wait`` answers as soon as a worker reports a change of the run, at its timeout when nothing
  changed, and at once for a run that has ended.

* On PostgreSQL, a worker on "another host" (a data folder with no ``notify.json``: no datagram reaches it, and it
  has no socket of the API to report to) is woken by ``LISTEN``/``NOTIFY`` when a run is queued, and its reports
  reach the client long-polling the run the same way.

With a 60 s poll the bounds below (20-30 s, 10 s) measure the mechanism, not the machine's speed.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import pytest
from rolloutgym import AsyncClient, Client
from rolloutgym.platform.errors import PlatformError
from rolloutgym_platform import db
from rolloutgym_platform.models import RunRow
from rolloutgym_platform.notify import Listener

POLL = 60.0


def _key(data, database: str | None = None) -> str:
    sessions = db.open_database(data, database)
    key = db.create_key(sessions, name="all", scopes=["run", "push", "train"], org="acme")
    sessions.kw["bind"].dispose()
    return key


def test_a_queued_run_is_claimed_and_its_end_reported_without_waiting_out_the_poll(servers, tmp_path) -> None:
    data = tmp_path / "data"
    key = _key(data)
    server = servers.start(data, workers=1, poll=POLL)
    try:
        with Client(server.url, key) as client:
            client.push("toy/arith-v0")
            first = client.wait_run(client.create_run("toy/arith-v0", "oracle", n=1, limit=1)["runId"], timeout=90)
            assert first["state"] == "succeeded"  # the worker is up (imports, the env's first build) and idle again
            time.sleep(0.5)
            started = time.monotonic()
            run = client.create_run("toy/arith-v0", "oracle", n=2, limit=2)
            assert run["state"] == "queued"
            done = client.wait_run(run["runId"], timeout=POLL)
            elapsed = time.monotonic() - started

            # Queued and followed in one request (POST /api/runs?until=ended): the API watches the run before it
            # queues it, so the worker's report of its end cannot slip in before the long-poll starts.
            started = time.monotonic()
            one = client.run_to_end("toy/arith-v0", "oracle", n=2, limit=2, wait_timeout=POLL)
            one_elapsed = time.monotonic() - started
            twin = asyncio.run(_run_to_end_async(server.url, key))
            before = len(client.list_runs())
            with pytest.raises(PlatformError, match="timeout must be a number"):
                client._call(
                    "POST",
                    "/api/runs",
                    json={"env_slug": "toy/arith-v0", "model": "oracle"},
                    params={"until": "ended", "timeout": "soon"},
                )
            assert len(client.list_runs()) == before  # a bad long-poll parameter queues nothing
    finally:
        server.stop()
    assert done["state"] == "succeeded" and done["trajectories"] == 4 and done["attempts"] == 1
    assert elapsed < 20, f"the run took {elapsed:.1f} s: the worker or the client waited for the {POLL:.0f} s poll"
    assert one["state"] == "succeeded" and one["trajectories"] == 4 and one["runId"] != run["runId"]
    assert one_elapsed < 20, f"run_to_end took {one_elapsed:.1f} s: it waited for the {POLL:.0f} s poll"
    assert twin["state"] == "succeeded" and twin["trajectories"] == 2


async def _run_to_end_async(url: str, key: str) -> dict:
    async with AsyncClient(url, key) as client:
        return await client.run_to_end("toy/arith-v0", "oracle", n=1, limit=2, wait_timeout=POLL)


def test_wait_answers_on_a_change_at_its_timeout_and_at_once_when_ended(servers, tmp_path) -> None:
    data = tmp_path / "data"
    key = _key(data)
    server = servers.start(data, workers=0, poll=POLL)  # the API only: this test plays the worker
    sessions = db.open_database(data)
    listener = Listener(data)
    try:
        with Client(server.url, key) as client:
            client.push("toy/arith-v0")
            run_id = client.create_run("toy/arith-v0", "oracle", n=1, limit=1)["runId"]
            answers: list[tuple[dict, float]] = []

            def watch() -> None:
                with Client(server.url, key) as watcher:
                    answers.append((watcher.watch_run(run_id, state="queued", done=0, timeout=30), time.monotonic()))

            waiting = threading.Thread(target=watch)
            waiting.start()
            time.sleep(1.0)  # the long-poll is waiting by now
            assert not answers, "the long-poll answered before the run changed"
            claimed, previous = db.claim(sessions, RunRow, "test-worker", 60)
            assert claimed.id == run_id and claimed.state == "running" and claimed.attempts == 1
            assert previous is None  # a first attempt: no earlier run file
            listener.changed("run", run_id)  # what a worker sends after it wrote the row
            changed_at = time.monotonic()
            waiting.join(timeout=40)
            ((answer, answered_at),) = answers
            assert answer["state"] == "running"
            assert answered_at - changed_at < 10, "the long-poll waited for the database poll, not the report"

            started = time.monotonic()
            same = client.watch_run(run_id, state="running", done=0, timeout=1.5)  # nothing changes
            assert same["state"] == "running" and time.monotonic() - started >= 1.4

            assert db.finish(sessions, RunRow, run_id, "test-worker", "failed", error="stopped by the test")
            started = time.monotonic()
            ended = client.watch_run(run_id, state="failed", timeout=30)  # ended: nothing more will change
            assert ended["state"] == "failed" and time.monotonic() - started < 10
    finally:
        listener.close()
        sessions.kw["bind"].dispose()
        server.stop()


def test_on_postgresql_a_worker_on_another_host_is_woken_by_notify(servers, postgres, tmp_path) -> None:
    database = postgres.new_database()
    key = _key(tmp_path / "api", database)
    server = servers.start(tmp_path / "api", database, workers=0, poll=POLL)  # the API only
    elsewhere = tmp_path / "other-host"  # no notify.json here: only the database links it to the API
    engine = db.make_engine(db.database_url(elsewhere, database))
    listener = Listener(elsewhere, engine)
    worker = None
    try:
        listener.hello()
        assert listener.hub is None and listener.pg.fileno() is not None  # LISTENing, with no datagram socket
        assert not listener.wait(0)
        with Client(server.url, key) as client:
            client.push("toy/arith-v0")
            first = client.create_run("toy/arith-v0", "oracle", n=1, limit=1)["runId"]
            assert listener.wait(30), "no NOTIFY reached the listener within 30 s (its poll would be 60 s)"
            command = [sys.executable, "-m", "rolloutgym_platform.worker", "--data", str(elsewhere)]
            worker = subprocess.Popen(command + ["--database", database, "--poll", str(POLL)])
            assert client.wait_run(first, timeout=120)["state"] == "succeeded"  # its first look found it
            time.sleep(1.0)  # the worker looks at the queue once more, finds nothing, and waits (60 s poll)
            second = client.create_run("toy/arith-v0", "oracle", n=2, limit=2)["runId"]
            done = client.wait_run(second, timeout=30)
            assert listener.wait(30)  # the in-process listener heard the second run queued too
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=30)
        listener.close()
        engine.dispose()
        server.stop()
    # Claimed and finished within 30 s, though the worker polls every 60 s and the API re-reads a waiting
    # client's run every 60 s: the NOTIFY woke the worker, and its reports (by NOTIFY) answered the long-poll.
    assert done["state"] == "succeeded", done
    assert done["trajectories"] == 4 and done["attempts"] == 1
