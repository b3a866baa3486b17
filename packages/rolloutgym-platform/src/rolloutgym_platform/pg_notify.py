"""Wake-ups across hosts on PostgreSQL: ``LISTEN``/``NOTIFY`` on the platform's own database.

The datagrams of :mod:`.notify` reach only processes on the API's host. On PostgreSQL the
same two messages also go through the database, which every worker reaches wherever it runs:

* ``rolloutgym_work``: queuing a run or a job sends ``NOTIFY`` in the transaction that inserts
  the row, so it is delivered when (and only if) the row is committed; every idle worker
  ``LISTEN``\\ s on its own connection and claims at once.
* ``rolloutgym_changed`` (payload ``run ID [STATE]`` or ``job ID``): a worker that cannot reach
  the API's socket (another host) reports a changed row this way; the API listens and wakes
  the clients long-polling that row.

SQLite has no such channel: there the datagrams and the ``--poll`` fallback are all there is.
A lost connection only loses wake-ups (the poll still finds the work); it is opened again at
the next look at the queue.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, text

WORK_CHANNEL = "rolloutgym_work"
CHANGED_CHANNEL = "rolloutgym_changed"


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def notify(connection: Any, channel: str, payload: str = "") -> None:
    """Send ``NOTIFY channel, payload`` on a SQLAlchemy connection or session (delivered at its commit)."""
    connection.execute(text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload})


def notify_work(session: Any) -> None:
    """On PostgreSQL, ``NOTIFY`` the listening workers in ``session``'s transaction (delivered once it commits)."""
    if is_postgres(session.get_bind()):
        notify(session, WORK_CHANNEL)


def libpq_url(engine: Engine) -> str:
    """The engine's URL as psycopg takes it (``postgresql://``, password included)."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


class PgListener:
    """A connection of its own that ``LISTEN``\\ s on ``channel``; :meth:`fileno` for ``select``, :meth:`drain`
    for the payloads received. Opened lazily (:meth:`ensure`); any failure closes it (and :meth:`fileno` is None)
    until the next :meth:`ensure`."""

    def __init__(self, url: str, channel: str) -> None:
        self.url, self.channel = url, channel
        self.connection: Any = None

    def ensure(self) -> bool:
        """Open the connection and ``LISTEN`` if it is not open; False when the database cannot be reached."""
        if self.connection is not None and not self.connection.closed:
            return True
        import psycopg

        try:
            self.connection = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            self.connection.execute(f"LISTEN {self.channel}")
        except psycopg.Error:
            self.close()
            return False
        return True

    def fileno(self) -> int | None:
        return self.connection.pgconn.socket if self.connection is not None else None

    def drain(self) -> list[str]:
        """The payloads of the notifications received so far (never blocks); [] when none or the link is lost."""
        if self.connection is None:
            return []
        import psycopg

        pgconn = self.connection.pgconn
        payloads: list[str] = []
        try:
            pgconn.consume_input()
            while (message := pgconn.notifies()) is not None:
                payloads.append(message.extra.decode(errors="replace"))
        except psycopg.Error:
            self.close()
        return payloads

    def close(self) -> None:
        if self.connection is not None:
            try:
                self.connection.close()
            except Exception:  # noqa: BLE001 - a broken connection may fail to close: it is dropped either way
                pass
        self.connection = None
