"""Choosing a backend and opening an episode's session."""

from __future__ import annotations

import sys
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ._results import Limits
from ._sessions import open_in_process
from ._sources import DatabaseSource

__all__ = ["BACKENDS", "check_backend", "open_session"]

BACKENDS = ("sqlite", "duckdb")


def check_backend(backend: str) -> str:
    """Validate a backend name (case-insensitive) and return it in lower case."""
    name = str(backend).strip().lower()
    if name not in BACKENDS:
        raise ConfigError(
            f"unknown SQL backend {backend!r}; choose one of: {', '.join(BACKENDS)} (e.g. --backend duckdb)"
        )
    if name == "duckdb":
        from ._duckdb_load import import_duckdb

        import_duckdb()
    return name


def open_session(
    backend: str, source: DatabaseSource, *, read_only: bool, limits: Limits, isolated: bool = True
) -> Any:
    """A fresh, isolated database session for one episode.

    ``isolated`` (the default, for everything an agent sends) runs the session in a worker
    process that is killed when a statement outlives its limits; ``isolated=False`` runs it
    in this process (for trusted SQL such as a task's gold query). Windows has no killable
    worker (no ``select`` on pipes, no address-space limit): sessions run in-process there.
    """
    if isolated and sys.platform != "win32":
        from ._worker import IsolatedSession

        return IsolatedSession(backend, source, read_only=read_only, limits=limits)
    return open_in_process(backend, source, read_only=read_only, limits=limits)
