"""Running an episode's database session in a child process that can be killed.

An agent's statement runs in a worker process (``python -m rolloutgym_sql._worker``), never
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
import os
import pickle
import resource
import select
import struct
import subprocess
import sys
import threading
import time
import weakref
from typing import Any

from ._results import Limits, QueryResult, StatementError
from ._schema import TableContents, TableInfo
from ._sessions import open_in_process
from ._sources import DatabaseSource

__all__ = ["IsolatedSession"]

_HEADER = struct.Struct("!Q")
# The first read of a reply asks for this much (most replies fit: one system call).
_FIRST_READ = 64 * 1024
_POOL_SIZE = 4
# Idle workers by backend: a SQLite session never lands in a worker that has loaded DuckDB and
# pyarrow (a bigger process with allocator threads; its round trips measured slower).
_IDLE: dict[str, list[_Worker]] = {}
_IDLE_LOCK = threading.Lock()
# Time the worker gets beyond the statement limit before it is killed (its own interrupt
# normally answers first; this covers start-up, pickling a large result, a slow machine).
_GRACE_SECONDS = 1.0
_OPEN_SECONDS = 120.0
# How many episode allowances our own reads and reply pickling may use beyond what is mapped.
_TRUSTED_FACTOR = 4


def _files_directory() -> str | None:
    """The parent's folder for DuckDB's read-only files (None when DuckDB is not in use here)."""
    try:
        from ._duckdb import files_directory
    except ImportError:  # pragma: no cover - the module imports duckdb lazily
        return None
    return files_directory()


class _WorkerDied(Exception):
    """The worker was killed (time limit) or died (memory limit, crash)."""


class _Worker:
    """One child process speaking length-prefixed pickles over its stdin/stdout.

    The pipes are used through their file descriptors (one ``writev`` per request, one
    ``poll`` plus usually one ``read`` per reply): buffered file objects and a fresh
    ``select`` per call cost more than the statement for a point lookup.
    """

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rolloutgym_sql._worker"],
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
        """Send one request; return the reply, raise its StatementError, or kill and raise _WorkerDied."""
        payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self._requests, _HEADER.pack(len(payload)), payload)
        except OSError:
            self.kill()
            raise _WorkerDied("the worker is gone") from None
        try:
            body = _read_message(self._replies, time.monotonic() + timeout, self._poll)
        except _WorkerDied:
            self.kill()
            raise
        status, value = pickle.loads(body)
        if status == "ok":
            return value
        if status == "statement":
            raise StatementError(value)
        self.kill()
        raise _WorkerDied(value)

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


def _write_all(descriptor: int, header: bytes, payload: bytes) -> None:
    """Write a header and its payload with one system call where the pipe takes it all (no joined copy)."""
    written = os.writev(descriptor, (header, payload))
    if written == len(header) + len(payload):
        return
    rest = memoryview(header + payload if written < len(header) else payload)[
        written if written < len(header) else written - len(header) :
    ]
    while rest:
        rest = rest[os.write(descriptor, rest) :]


def _read_message(descriptor: int, deadline: float | None = None, waiter: Any = None) -> bytes | bytearray:
    """One length-prefixed message: usually one ``read``; a large one is read into its final buffer.

    With a poll ``waiter``, waits at most until ``deadline`` (monotonic) for each chunk and
    raises _WorkerDied("timeout") beyond it; end of file raises _WorkerDied("the worker exited").
    """
    # Only one message is ever in flight each way, so reading ahead cannot take part of the next one.
    head = b""
    while len(head) < _HEADER.size:
        _wait_readable(waiter, deadline)
        chunk = os.read(descriptor, _FIRST_READ)
        if not chunk:
            raise _WorkerDied("the worker exited")
        head += chunk
    size = _HEADER.unpack_from(head)[0]
    filled = len(head) - _HEADER.size
    if filled >= size:
        return head[_HEADER.size : _HEADER.size + size]
    body = bytearray(size)
    view = memoryview(body)
    view[:filled] = head[_HEADER.size :]
    while filled < size:
        _wait_readable(waiter, deadline)
        count = os.readv(descriptor, [view[filled:]])
        if not count:
            raise _WorkerDied("the worker exited")
        filled += count
    return body


def _wait_readable(waiter: Any, deadline: float | None) -> None:
    if waiter is None or deadline is None:
        return
    left_ms = (deadline - time.monotonic()) * 1000
    if left_ms <= 0 or not waiter.poll(left_ms):
        raise _WorkerDied("timeout")


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

    def __init__(self, backend: str, source: DatabaseSource, *, read_only: bool, limits: Limits) -> None:
        self.backend = backend
        self.dialect = "DuckDB" if backend == "duckdb" else "SQLite"
        self.read_only = read_only
        self.limits = limits
        self._image_key = source.cache_key()
        self._image = source.sqlite_image()
        self._changes: list[str] = []
        self._needs_restore = False
        self._worker: _Worker | None = None
        self._finalizer: Any = None
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
            except (StatementError, _WorkerDied):
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
        except _WorkerDied as exc:
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

    def tables(self) -> list[TableInfo]:
        """Every user table with columns, keys and row count."""
        return self._trusted("tables")  # type: ignore[no-any-return]

    def contents(self) -> dict[str, TableContents]:
        """Every row of every user table (for the database diff)."""
        return self._trusted("contents")  # type: ignore[no-any-return]

    def _trusted(self, operation: str) -> Any:
        try:
            return self._request((operation,), _OPEN_SECONDS)
        except _WorkerDied as exc:
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
        except (StatementError, _WorkerDied):
            worker.kill()
            return
        _give_back(worker, self.backend)


# -- the worker process -------------------------------------------------------------------


class _ImageSource(DatabaseSource):
    def __init__(self, key: str, image: bytes) -> None:
        self.key = key
        self._image = image

    def sqlite_image(self) -> bytes:
        return self._image


def _in_use() -> int:
    """Bytes of address space this process maps now (0 when /proc cannot tell)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _limit_memory(limits: Limits) -> None:
    """Cap the worker's address space at what it uses now plus ``limits.memory_bytes``."""
    in_use = _in_use()
    if not in_use:
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = in_use + limits.memory_bytes
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


class _TrustedRoom:
    """Room beyond the agent's memory cap for our own reads of the database and for sending replies.

    The cap (``_limit_memory``) is for the agent's statements. A database engine keeps some of
    what a statement allocated (DuckDB's buffer pool, the allocator's free lists), so after a
    statement that came close to the cap, reading every row for the grader or pickling a reply
    would fail for lack of memory the agent did not use. While a trusted operation runs the cap
    is raised to what is in use plus ``_TRUSTED_FACTOR`` times the episode's allowance (still a
    bound), then put back exactly as it was.
    """

    def __init__(self, limits: Limits | None) -> None:
        self._limits = limits
        self._saved: tuple[int, int] | None = None

    def __enter__(self) -> None:
        if self._limits is None:
            return
        self._saved = resource.getrlimit(resource.RLIMIT_AS)
        soft, hard = self._saved
        if soft == resource.RLIM_INFINITY:
            return
        wanted = _in_use() + _TRUSTED_FACTOR * self._limits.memory_bytes
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_AS, (max(wanted, soft), hard))

    def __exit__(self, *_exc: object) -> None:
        if self._saved is not None:
            resource.setrlimit(resource.RLIMIT_AS, self._saved)
            self._saved = None


def _handle(message: tuple[Any, ...], state: dict[str, Any]) -> tuple[str, Any]:
    """Carry out one request in the worker; the reply's status is ok, statement or fatal."""
    operation = message[0]
    session = state.get("session")
    if operation == "open":
        _, backend, key, image, read_only, limits, files = message
        if files is not None and backend == "duckdb":
            from ._duckdb import set_files_directory

            set_files_directory(files)
        if image is not None:
            state["images"][key] = image
        if session is not None:
            session.close()
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.getrlimit(resource.RLIMIT_AS)[1]))
        source = _ImageSource(key, state["images"][key])
        state["session"] = open_in_process(backend, source, read_only=read_only, limits=limits)
        state["limits"] = limits
        _limit_memory(limits)
        return ("ok", None)
    if operation == "execute":
        result = session.execute(message[1], max_rows=message[2])
        # A plain tuple: pickling the dataclass costs several times more than its fields.
        return (
            "ok",
            (
                result.columns,
                result.rows,
                result.truncated,
                result.changed_rows,
                result.returns_rows,
                bool(session.last_statement_wrote),
            ),
        )
    if operation in ("tables", "contents"):
        with _TrustedRoom(state.get("limits")):
            return ("ok", session.tables() if operation == "tables" else session.contents())
    if operation == "close":
        if session is not None:
            session.close()
            state["session"] = None
        return ("ok", None)
    return ("fatal", f"unknown request {operation!r}")


def _encode(reply: tuple[str, Any], limits: Limits | None) -> bytes:
    """Pickle a reply; a reply too big even with room beyond the agent's cap is a statement error.

    Most replies are small and pickle under the agent's cap. Only one that runs out of memory
    (an engine keeps part of what a statement near the cap allocated) is pickled again with
    :class:`_TrustedRoom`: raising and restoring the cap costs a ``/proc`` read and two
    ``setrlimit`` calls, more than a point lookup itself.
    """
    try:
        return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        pass
    except Exception as exc:
        return pickle.dumps(("fatal", f"the reply could not be sent: {type(exc).__name__}: {exc}"))
    with _TrustedRoom(limits):
        try:
            return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            return pickle.dumps(("statement", "the result needed more memory than an episode may use"))
        except Exception as exc:
            return pickle.dumps(("fatal", f"the reply could not be sent: {type(exc).__name__}: {exc}"))


def _private_pipes() -> tuple[int, int]:
    """The request and reply pipes on descriptors of their own; fds 0 and 1 become /dev/null and stderr.

    Anything in the worker that prints (a library's progress output) then cannot corrupt a reply.
    """
    requests, replies = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return requests, replies


def _serve() -> None:
    requests, replies = _private_pipes()
    state: dict[str, Any] = {"images": {}, "session": None, "limits": None}
    while True:
        try:
            body = _read_message(requests)
        except _WorkerDied:  # the parent closed the pipe
            return
        try:
            reply = _handle(pickle.loads(body), state)
        except StatementError as exc:
            reply = ("statement", str(exc))
        except MemoryError:
            reply = ("statement", "the statement needed more memory than an episode may use and was stopped")
        except Exception as exc:  # reported to the parent, which restarts the worker
            reply = ("fatal", f"{type(exc).__name__}: {exc}")
        payload = _encode(reply, state["limits"])
        _write_all(replies, _HEADER.pack(len(payload)), payload)


if __name__ == "__main__":
    _serve()
