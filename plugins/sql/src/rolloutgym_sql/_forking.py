"""What a ``SqlEnv`` fork copies: the episode's database and its counters.

A fork opens the task's database in its own worker and replays the episode's data-changing
statements (the ones that succeeded, in order), as the session already does after a worker
restart. On SQLite, past :data:`REPLAY_AT_MOST` changes the database is copied whole instead
(``sqlite3.Connection.serialize`` in the worker) and the fork's worker opens that copy.
A read-only task's database never changes: its fork opens the task's database as it is.

A state restored from a file runs as agent SQL in the same killable, memory-limited worker
(its statements are replayed there and its SQLite image is opened there, never in this process).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ._results import StatementError
from ._sources import DatabaseSource
from ._worker_pipe import WorkerDied

__all__ = ["ForkImage", "restore_session", "session_state"]


class ForkImage(DatabaseSource):
    """A database copied from an episode mid-way (used once by the worker, never cached there)."""

    def __init__(self, image: bytes) -> None:
        self.key = "fork:" + hashlib.sha256(image).hexdigest()[:32]
        self._image = image

    def sqlite_image(self) -> bytes:
        return self._image


# Up to this many data changes a SQLite fork replays them (each one a quick request to the
# fork's worker) instead of copying the database (two transfers of the whole file).
REPLAY_AT_MOST = 16


def session_state(session: Any, *, read_only: bool) -> dict[str, Any]:
    """The database part of a snapshot: ``open``, the replayable ``statements`` and the SQLite ``database``."""
    if session is None:
        return {"open": False, "statements": []}
    if read_only:
        return {"open": True, "statements": []}
    changes = list(session.changes)
    if len(changes) <= REPLAY_AT_MOST or session.backend != "sqlite":
        return {"open": True, "statements": changes}
    return {"open": True, "statements": [], "database": session.image()}


def restore_session(env: Any, data: dict[str, Any]) -> Any:
    """A new isolated session in the state ``data`` describes (None when the episode had none)."""
    from ._worker import IsolatedSession

    if not data["open"]:
        return None
    statements = tuple(str(statement) for statement in data["statements"])
    image = data.get("database")
    if env.read_only and (statements or image is not None):
        raise ValueError("a read-only task's state carries database changes")
    if image is not None and not isinstance(image, bytes):
        raise TypeError("the state's database must be a blob")
    if image is not None and env.backend != "sqlite":
        raise ValueError(f"the state holds a SQLite database copy; this env runs on {env.backend}: use backend=sqlite")
    source = env.source if image is None else ForkImage(image)
    try:
        return IsolatedSession(env.backend, source, read_only=env.read_only, limits=env.limits, changes=statements)
    except (StatementError, WorkerDied) as exc:
        raise ValueError(f"the state's database could not be opened ({exc})") from None
