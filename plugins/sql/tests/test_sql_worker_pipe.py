"""The worker's hand-off (issue 30): the cheaper pipe protocol keeps its guarantees.

* A reply larger than one read arrives whole and equal to the in-process result.
* A reply that stops half-way (a worker stuck after its header) ends at the deadline
  instead of blocking the grader: the wait applies to every chunk, not only the first.
* Anything the worker prints goes to stderr, never into the reply pipe.
* Sessions of each backend come from their own idle pool.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time

import pytest
from rolloutgym_sql import Limits
from rolloutgym_sql._sessions import open_in_process
from rolloutgym_sql._worker import _IDLE, IsolatedSession
from rolloutgym_sql._worker_pipe import _FIRST_READ, HEADER, WorkerDied, read_message, write_all
from rolloutgym_sql.shop import shop_source


def test_a_reply_larger_than_one_read_arrives_whole() -> None:
    source, limits = shop_source(), Limits()
    statement = "SELECT *, printf('%0100d', order_item_id) AS padding FROM order_items ORDER BY order_item_id"
    isolated = IsolatedSession("sqlite", source, read_only=True, limits=limits)
    local = open_in_process("sqlite", source, read_only=True, limits=limits)
    try:
        through_worker = isolated.execute(statement, max_rows=20_000)
        expected = local.execute(statement, max_rows=20_000)
        assert len(pickle.dumps(through_worker.rows)) > 4 * _FIRST_READ  # several reads
        assert through_worker == expected
        assert isolated.contents() == local.contents()
    finally:
        isolated.close()
        local.close()


def test_a_reply_cut_after_its_header_ends_at_the_deadline() -> None:
    import select

    reading, writing = os.pipe()
    try:
        write_all(writing, HEADER.pack(1000), b"only ten b")
        waiter = select.poll()
        waiter.register(reading, select.POLLIN)
        started = time.monotonic()
        with pytest.raises(WorkerDied, match="timeout"):
            read_message(reading, started + 0.3, waiter)
        assert time.monotonic() - started < 10.0
    finally:
        os.close(reading)
        os.close(writing)


def test_a_reply_whole_in_the_first_read_and_end_of_file() -> None:
    reading, writing = os.pipe()
    try:
        write_all(writing, HEADER.pack(5), b"hello")
        assert bytes(read_message(reading)) == b"hello"
        os.close(writing)
        with pytest.raises(WorkerDied, match="exited"):
            read_message(reading)
    finally:
        os.close(reading)


_PRINTING_WORKER = """
import os
from rolloutgym_sql._worker_pipe import HEADER, write_all
from rolloutgym_sql._worker_process import _private_pipes

requests, replies = _private_pipes()
print("a library's progress output", flush=True)
os.write(1, b"more output on descriptor 1")
write_all(replies, HEADER.pack(2), b"ok")
"""


def test_what_the_worker_prints_never_reaches_the_reply_pipe() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PRINTING_WORKER], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == HEADER.pack(2) + b"ok"
    assert b"progress output" in done.stderr and b"more output" in done.stderr


def test_each_backend_has_its_own_idle_pool() -> None:
    session = IsolatedSession("sqlite", shop_source(), read_only=True, limits=Limits())
    worker = session._worker
    session.close()
    assert worker in _IDLE["sqlite"]
    assert worker not in _IDLE.get("duckdb", [])
    again = IsolatedSession("sqlite", shop_source(), read_only=True, limits=Limits())
    try:
        assert again._worker is worker  # reused, no new Python start-up
    finally:
        again.close()
