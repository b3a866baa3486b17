"""The SQL worker process (``python -m rolloutgym_sql._worker_process``): it opens the episode's
session from the parent's database image, runs each request under the agent's memory cap, and
answers on its private pipe (see :mod:`rolloutgym_sql._worker` for the parent's side)."""

from __future__ import annotations

import os
import pickle
import resource
from typing import Any

from ._results import Limits, StatementError
from ._sessions import open_in_process
from ._sources import DatabaseSource
from ._worker_pipe import HEADER, WorkerDied, read_message, write_all

__all__: list[str] = []


# How many episode allowances our own reads and reply pickling may use beyond what is mapped.
_TRUSTED_FACTOR = 4


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
            from ._duckdb_load import set_files_directory

            set_files_directory(files)
        # A fork's database (key "fork:...") is used once, never kept: a tree of forks would pile up here.
        if image is not None and not key.startswith("fork:"):
            state["images"][key] = image
        if session is not None:
            session.close()
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.getrlimit(resource.RLIMIT_AS)[1]))
        source = _ImageSource(key, image if key.startswith("fork:") else state["images"][key])
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
    if operation == "image":  # the episode's SQLite database as bytes (a fork copies it)
        with _TrustedRoom(state.get("limits")):
            return ("ok", session.connection.serialize() if session.backend == "sqlite" else None)
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
            body = read_message(requests)
        except WorkerDied:  # the parent closed the pipe
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
        write_all(replies, HEADER.pack(len(payload)), payload)


if __name__ == "__main__":
    _serve()
