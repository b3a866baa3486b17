"""Running an episode's database session in a child process that can be killed.

An agent's statement runs in a worker process (``python -m rolloutgym_sql._worker_process``), never
in the process that grades it. In-process checks (SQLite's progress handler, DuckDB's
interrupt timer) stop most long statements at ``Limits.statement_seconds``; what they cannot
stop (one function call that runs for minutes, e.g. SQLite ``printf('%.*c', 2000000000,
'x')`` or DuckDB ``lpad('x', 2000000000, 'y')``) is stopped by killing the worker a little
later, and an allocation beyond ``Limits.memory_bytes`` fails inside the worker (an address
space limit) instead of exhausting the machine.

After a kill the session is rebuilt in a fresh worker from the source, and the episode's
earlier successful data changes are replayed in order, so the agent keeps its work.
Idle workers are pooled per backend and reused (one Python start-up per worker, not per episode).

The hand-off is kept cheap because every ``run_sql`` pays it (issue 30): one ``writev`` per
message on the raw pipe descriptors, a registered ``poll`` and usually one ``read`` per reply,
results as plain tuples, and the memory cap raised for pickling a reply only when pickling
under it failed. What remains per statement is the two process wake-ups.
"""

from __future__ import annotations

import atexit
import pickle
import select
import subprocess
import sys
import threading
import time
import weakref
from typing import Any

from ._results import Limits, QueryResult, StatementError
from ._schema import TableContents, TableInfo
from ._sources import DatabaseSource
from ._worker_pipe import HEADER, WorkerDied, read_message, write_all

__all__ = ["IsolatedSession"]

_POOL_SIZE = 4
# Idle workers by backend: a SQLite session never lands in a worker that has loaded DuckDB and
# pyarrow (a bigger process with allocator threads; its round trips measured slower).
_IDLE: dict[str, list[_Worker]] = {}
_IDLE_LOCK = threading.Lock()
# Time the worker gets beyond the statement limit before it is killed (its own interrupt
# normally answers first; this covers start-up, pickling a large result, a slow machine).
_GRACE_SECONDS = 1.0
_OPEN_SECONDS = 120.0


def _files_directory() -> str | None:
    """The parent's folder for DuckDB's read-only files (None when DuckDB is not in use here)."""
    try:
        from ._duckdb_load import files_directory
    except ImportError:  # pragma: no cover - the module imports duckdb lazily
        return None
    return files_directory()


class _Worker:
    """One child process speaking length-prefixed pickles over its stdin/stdout.

    The pipes are used through their file descriptors (one ``writev`` per request, one
    ``poll`` plus usually one ``read`` per reply): buffered file objects and a fresh
    ``select`` per call cost more than the statement for a point lookup.
    """

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rolloutgym_sql._worker_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            bufsize=0,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._requests = self.process.stdin.fileno()
        self._replies = self.process.stdout.fileno()
        self._poll = select.poll()
        self._poll.register(self._replies, select.POLLIN)
        self.known_images: set[str] = set()

    def request(self, message: tuple[Any, ...], timeout: float) -> Any:
        """Send one request; return the reply, raise its StatementError, or kill and raise WorkerDied."""
        payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            write_all(self._requests, HEADER.pack(len(payload)), payload)
        except OSError:
            self.kill()
            raise WorkerDied("the worker is gone") from None
        try:
            body = read_message(self._replies, time.monotonic() + timeout, self._poll)
        except WorkerDied:
            self.kill()
            raise
        status, value = pickle.loads(body)
        if status == "ok":
            return value
        if status == "statement":
            raise StatementError(value)
        self.kill()
        raise WorkerDied(value)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


def _take_worker(backend: str) -> _Worker:
    with _IDLE_LOCK:
        idle = _IDLE.get(backend, [])
        while idle:
            worker = idle.pop()
            if worker.alive:
                return worker
            worker.kill()
    return _Worker()


def _give_back(worker: _Worker, backend: str) -> None:
    with _IDLE_LOCK:
        idle = _IDLE.setdefault(backend, [])
        if worker.alive and len(idle) < _POOL_SIZE:
            idle.append(worker)
            return
    worker.kill()


@atexit.register
def _stop_idle_workers() -> None:
    with _IDLE_LOCK:
        workers = [worker for idle in _IDLE.values() for worker in idle]
        _IDLE.clear()
    for worker in workers:
        worker.kill()


class IsolatedSession:
    """An episode's database session living in a killable worker process.

    Same interface as the in-process sessions (``execute``, ``tables``, ``contents``,
    ``close``); statements that outlive their limit are stopped by killing the worker.
    """

    def __init__(
        self, backend: str, source: DatabaseSource, *, read_only: bool, limits: Limits, changes: tuple[str, ...] = ()
    ) -> None:
        self.backend = backend
        self.dialect = "DuckDB" if backend == "duckdb" else "SQLite"
        self.read_only = read_only
        self.limits = limits
        self._image_key = source.cache_key()
        self._image = source.sqlite_image()
        # ``changes``: a fork's earlier data changes, replayed now (as after a worker restart).
        self._changes: list[str] = list(changes)
        self._needs_restore = bool(changes)
        self._worker: _Worker | None = None
        self._finalizer: Any = None
        if self._needs_restore:
            self._restore()
        else:
            self._start()

    def _start(self) -> None:
        worker = _take_worker(self.backend)
        try:
            image = None if self._image_key in worker.known_images else self._image
            files = _files_directory() if self.backend == "duckdb" else None
            worker.request(
                ("open", self.backend, self._image_key, image, self.read_only, self.limits, files), _OPEN_SECONDS
            )
        except BaseException:
            worker.kill()
            raise
        if not self._image_key.startswith("fork:"):
            worker.known_images.add(self._image_key)
        self._worker = worker
        self._finalizer = weakref.finalize(self, worker.kill)

    def _stop(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._worker is not None:
            self._worker.kill()
            self._worker = None

    def _restore(self) -> None:
        """Start a fresh worker with the source plus the episode's earlier changes, replayed in order."""
        self._start()
        self._needs_restore = False
        for statement in list(self._changes):
            try:
                self._request(("execute", statement, 1), self.limits.statement_seconds * 1.25 + _GRACE_SECONDS)
            except (StatementError, WorkerDied):
                self._stop()
                self._start()
                self._changes.clear()
                raise StatementError(
                    "the database was reset to its initial state: after a statement was stopped, replaying "
                    "your earlier changes failed. Redo your changes, then run this statement again."
                ) from None

    def _request(self, message: tuple[Any, ...], timeout: float) -> Any:
        if self._needs_restore:
            self._restore()
        if self._worker is None:
            raise StatementError("the database session is closed")
        return self._worker.request(message, timeout)

    def _lost_worker(self) -> str:
        """Forget a killed worker (a fresh one starts at the next call); says what is kept."""
        self._stop()
        self._needs_restore = True
        if self._changes:
            return f"your {len(self._changes)} earlier data-changing statement(s) are kept"
        return "the database is unchanged"

    def execute(self, sql: str, *, max_rows: int) -> QueryResult:
        """Run one statement in the worker; a statement beyond the limits ends as a StatementError."""
        if not isinstance(sql, str):
            raise StatementError(f"the SQL must be a string, got {type(sql).__name__}")
        started = time.monotonic()
        try:
            reply = self._request(("execute", sql, max_rows), self.limits.statement_seconds * 1.25 + _GRACE_SECONDS)
        except WorkerDied as exc:
            elapsed = time.monotonic() - started
            kept = self._lost_worker()
            if str(exc) == "timeout" or elapsed >= self.limits.statement_seconds:
                reason = f"the statement ran longer than {self.limits.statement_seconds:g} s and was stopped"
            elif str(exc) != "the worker exited":
                reason = f"the database engine failed on this statement ({exc})"
            else:
                reason = (
                    f"the statement needed more than the {self.limits.memory_bytes // (1024 * 1024)} MB "
                    "of memory an episode may use and was stopped"
                )
            raise StatementError(f"{reason}; {kept}. Simplify the query or add conditions.") from None
        *fields, wrote = reply
        result = QueryResult(*fields)
        if wrote and not self.read_only:
            self._changes.append(sql)
        return result

    @property
    def changes(self) -> tuple[str, ...]:
        """The episode's successful data-changing statements, in order."""
        return tuple(self._changes)

    def image(self) -> bytes | None:
        """The SQLite database now, as bytes (None on DuckDB: a fork replays :attr:`changes` there)."""
        return self._trusted("image")  # type: ignore[no-any-return]

    def tables(self) -> list[TableInfo]:
        """Every user table with columns, keys and row count."""
        return self._trusted("tables")  # type: ignore[no-any-return]

    def contents(self) -> dict[str, TableContents]:
        """Every row of every user table (for the database diff)."""
        return self._trusted("contents")  # type: ignore[no-any-return]

    def _trusted(self, operation: str) -> Any:
        try:
            return self._request((operation,), _OPEN_SECONDS)
        except WorkerDied as exc:
            self._lost_worker()
            raise StatementError(f"reading the database failed ({exc}); the session will be restarted") from None

    def close(self) -> None:
        """End the session; the worker goes back to the pool (idempotent)."""
        worker = self._worker
        self._needs_restore = False
        if worker is None:
            return
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        self._worker = None
        try:
            worker.request(("close",), _OPEN_SECONDS)
        except (StatementError, WorkerDied):
            worker.kill()
            return
        _give_back(worker, self.backend)
