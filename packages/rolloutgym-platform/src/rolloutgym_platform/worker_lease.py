"""What a worker holds while it executes a claimed row: the lease, renewed by a heartbeat thread that also writes
the progress counters, and the one-line account of a failure."""

from __future__ import annotations

import os
import threading
import traceback
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from . import db
from .models import RunRow
from .notify import Listener


class LeaseLost(Exception):
    """Another worker holds the row now (this one was too slow to renew its lease)."""


_HIDDEN: list[str] = []  # the data folders of this process (hide_path): never shown in an error


def hide_path(data: Path) -> None:
    """Show paths under ``data`` (the platform's data folder) relative to it in every :func:`describe` line."""
    prefix = str(Path(data).resolve()) + os.sep
    if prefix not in _HIDDEN:
        _HIDDEN.append(prefix)


def _hidden(text: str) -> str:
    for prefix in _HIDDEN:
        text = text.replace(prefix, "")
    return text


def describe(exc: BaseException) -> str:
    """One line for a failed run or job: the error, and for user code the file and line it came from; paths
    under the data folder are shown relative to it (an error never carries the server's data path)."""
    from rolloutgym_protocol.errors import RolloutGymError

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, RolloutGymError):
        return _hidden(text)
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f"{frame.filename}:{frame.lineno}: " for frame in reversed(frames) if "/envs/" in frame.filename), "")
    return _hidden(f"{where}{type(exc).__name__}: {text}")


class Heartbeat:
    """Renews a lease every third of its length from a thread, writing the progress counters."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        model: Any,
        row_id: str,
        owner: str,
        lease: float,
        listener: Listener | None = None,
    ) -> None:
        self.sessions, self.model, self.row_id, self.owner, self.lease = sessions, model, row_id, owner, lease
        self.listener = listener
        self.values: dict[str, Any] = {}
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def beat(self) -> None:
        """Renew the lease now; once it is lost it stays lost (another worker may hold the row)."""
        from sqlalchemy.exc import SQLAlchemyError

        if self.lost:
            return
        try:
            renewed = db.renew(self.sessions, self.model, self.row_id, self.owner, self.lease, **dict(self.values))
        except SQLAlchemyError:  # the database is unreachable for now: the next beat tries again
            return
        if not renewed:
            self.lost = True
        elif self.listener is not None:  # the progress is in the database: clients waiting on the row look now
            self.listener.changed("run" if self.model is RunRow else "job", self.row_id, "running")

    def _loop(self) -> None:
        while not self._stop.wait(min(self.lease / 3, 2.0)):
            self.beat()
