"""Opening a session in this process, on SQLite or DuckDB (for trusted SQL and inside the worker)."""

from __future__ import annotations

from typing import Any

from ._results import Limits
from ._sources import DatabaseSource

__all__ = ["open_in_process"]


def open_in_process(backend: str, source: DatabaseSource, *, read_only: bool, limits: Limits) -> Any:
    """A session on a fresh copy of ``source`` that runs statements in this process.

    Used for trusted SQL (a task's gold query) and by the worker process itself; an agent's
    statements go through :func:`rolloutgym_sql._backends.open_session`, which isolates them.
    """
    if backend == "duckdb":
        from ._duckdb import DuckDBSession

        return DuckDBSession(source, read_only=read_only, limits=limits)
    from ._sqlite import SqliteSession

    return SqliteSession(source, read_only=read_only, limits=limits)
