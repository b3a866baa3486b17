"""Wake-ups between the API and the workers: datagrams on 127.0.0.1, found through ``DATA/notify.json``.

The queue and the progress live in the database; a message only says "look now". The API
process binds a UDP socket on 127.0.0.1 (port 0) and writes its address to ``DATA/notify.json``.
A worker going idle sends ``hello`` from its own socket and then waits on that socket: when a run
or job is queued the API sends ``work`` to every worker that said hello, so the worker claims it
at once instead of at its next poll. A worker that changed a row (its claim, progress at each
heartbeat, the end of a run or job) sends ``changed run ID [STATE]`` (or ``job ID``), which wakes the
clients that long-poll that row (``GET /api/runs/ID/wait``); a client waiting only for the end
(``?until=ended``) is not answered, and the API does not read the row, while the state the message
names is still ``queued`` or ``running``.

Workers on another host (the address file names its host; they do not use it) cannot reach
the socket: on PostgreSQL both messages also travel as ``LISTEN``/``NOTIFY`` on the database
(:mod:`.pg_notify`; a worker reports a change that way only when it has no socket to send it
to). On SQLite they lose the wake-ups. A lost message costs at most one poll interval
(``--poll``): idle workers and waiting clients read the database that often anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .pg_notify import CHANGED_CHANNEL, WORK_CHANNEL, PgListener, is_postgres, libpq_url, notify

HELLO = b"hello"
WORK = b"work"
CHANGED = b"changed "
FORGET_AFTER = 3600.0  # seconds: a worker that has not said hello for that long is no longer woken


def address_file(data: str | Path) -> Path:
    return Path(data) / "notify.json"


def _datagram_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    return sock


def _send(sock: socket.socket, message: bytes, address: tuple[str, int]) -> bool:
    try:
        sock.sendto(message, address)
    except OSError:  # the receiver is gone (or its buffer is full): the database poll covers it
        return False
    return True


ACTIVE = ("queued", "running")


class Watch(asyncio.Event):
    """The event of a client waiting on a row; ``still_active``: every change reported since it was cleared
    named the row's state, and it was still queued or running (so a client waiting for the end need not look)."""

    def __init__(self) -> None:
        super().__init__()
        self.still_active = True

    def clear(self) -> None:
        super().clear()
        self.still_active = True

    def report(self, state: str | None) -> None:
        """A worker changed the row; ``state``: the state it wrote, when the message named it."""
        if state not in ACTIVE:
            self.still_active = False
        self.set()


class Hub:
    """The API's end: wakes workers when work is queued, and wakes clients waiting on a row that changed."""

    def __init__(self, data: str | Path, engine: Any = None) -> None:
        self.sock = _datagram_socket()
        # On PostgreSQL, workers on other hosts report changes by NOTIFY: the hub listens on its own connection.
        self.pg = PgListener(libpq_url(engine), CHANGED_CHANNEL) if engine is not None and is_postgres(engine) else None
        self._pg_task: asyncio.Task | None = None
        self.subscribers: dict[tuple[str, int], float] = {}
        self.waiters: dict[str, set[Watch]] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        path = address_file(data)
        record = {"host": socket.gethostname(), "port": self.sock.getsockname()[1], "pid": os.getpid()}
        temporary = path.with_name(f".notify-{os.getpid()}.json")
        temporary.write_text(json.dumps(record), encoding="utf-8")
        temporary.replace(path)  # atomic: a worker never reads half a file

    def start(self) -> None:
        """Read the socket from the running event loop (the API's); call it from that loop."""
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.sock.fileno(), self._readable)
        if self.pg is not None:
            self._pg_task = self._loop.create_task(self._listen_pg())

    async def _listen_pg(self) -> None:
        """Keep the hub's ``LISTEN`` connection open (connecting in a thread: the loop never waits on the
        database), reading it from the loop; a lost connection is opened again after 5 s."""
        assert self.pg is not None and self._loop is not None
        while True:
            if await asyncio.to_thread(self.pg.ensure):
                fd = self.pg.fileno()
                lost = asyncio.Event()
                self._loop.add_reader(fd, self._pg_readable, lost)
                try:
                    await lost.wait()
                finally:
                    self._loop.remove_reader(fd)
            await asyncio.sleep(5.0)

    def _pg_readable(self, lost: asyncio.Event) -> None:
        assert self.pg is not None
        for payload in self.pg.drain():
            self._changed(payload)
        if self.pg.fileno() is None:
            lost.set()

    def close(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.sock.fileno())
        if self._pg_task is not None:
            self._pg_task.cancel()
        if self.pg is not None:
            self.pg.close()
        self.sock.close()

    def _changed(self, text: str) -> None:
        """``KIND ID [STATE]``: a worker changed that row; wake the clients waiting on it."""
        kind, _, rest = text.partition(" ")
        row_id, _, state = rest.partition(" ")
        for watch in self.waiters.get(f"{kind} {row_id}", ()):
            watch.report(state or None)

    def _readable(self) -> None:
        while True:
            try:
                message, sender = self.sock.recvfrom(512)
            except OSError:  # drained (BlockingIOError) or an error queued on the socket
                return
            if message == HELLO:
                with self._lock:
                    self.subscribers[sender] = time.monotonic()
            elif message.startswith(CHANGED):
                self._changed(message.removeprefix(CHANGED).decode(errors="replace"))

    def work_queued(self) -> None:
        """Wake every idle worker (from any thread): one of them claims the new work."""
        now = time.monotonic()
        with self._lock:
            for address, seen in list(self.subscribers.items()):
                if now - seen > FORGET_AFTER or not _send(self.sock, WORK, address):
                    del self.subscribers[address]

    @contextlib.contextmanager
    def watch(self, topic: str) -> Iterator[Watch]:
        """An event set when a worker says ``topic`` (``run ID``, ``job ID``) changed; call it in the event loop."""
        event = Watch()
        self.waiters.setdefault(topic, set()).add(event)
        try:
            yield event
        finally:
            watchers = self.waiters.get(topic, set())
            watchers.discard(event)
            if not watchers:
                self.waiters.pop(topic, None)


class Listener:
    """A worker's end: says hello to the API, waits for ``work`` (or the poll interval), reports changes.

    With ``engine`` on PostgreSQL it also ``LISTEN``\\ s for queued work on a connection of its own, and reports
    changes by ``NOTIFY`` when it has no socket of the API to send them to (another host).
    """

    def __init__(self, data: str | Path, engine: Any = None) -> None:
        self.path = address_file(data)
        self.sock = _datagram_socket()
        postgres = engine is not None and is_postgres(engine)
        self.engine = engine if postgres else None
        self.pg = PgListener(libpq_url(engine), WORK_CHANNEL) if postgres else None
        self._stamp: tuple[int, int] | None = None
        self.hub: tuple[str, int] | None = None

    def _find_hub(self) -> tuple[str, int] | None:
        """The API's address from ``DATA/notify.json`` (re-read when the file changes); None on another host."""
        try:
            stat = self.path.stat()
        except OSError:
            self._stamp, self.hub = None, None
            return None
        if (stat.st_ino, stat.st_mtime_ns) != self._stamp:
            self._stamp = (stat.st_ino, stat.st_mtime_ns)
            try:
                record = json.loads(self.path.read_text(encoding="utf-8"))
                local = record["host"] == socket.gethostname()
                self.hub = ("127.0.0.1", int(record["port"])) if local else None
            except (OSError, ValueError, KeyError, TypeError):
                self.hub = None
        return self.hub

    def hello(self) -> None:
        """Ask to be woken when work is queued; sent before each look at the queue, so no wake-up falls between."""
        hub = self._find_hub()
        if hub is not None:
            _send(self.sock, HELLO, hub)
        if self.pg is not None and self.pg.ensure():
            self.pg.drain()  # wake-ups already received: the look at the queue that follows sees their work

    def wait(self, timeout: float) -> bool:
        """Sleep until the API says work was queued or ``timeout`` passes; True when woken."""
        pg = self.pg.fileno() if self.pg is not None else None
        ready, _, _ = select.select([self.sock] + ([pg] if pg is not None else []), [], [], timeout)
        woken = False
        while self.sock in ready:
            try:
                woken = self.sock.recv(512) == WORK or woken
            except OSError:  # drained (BlockingIOError) or an error queued on the socket
                break
        if pg is not None and pg in ready:  # readable: a notification, or another message of the server's
            woken = bool(self.pg.drain()) or woken
        return woken

    def changed(self, kind: str, row_id: str, state: str | None = None) -> None:
        """Tell the API that the row (``kind`` run or job) changed in the database: its watchers look again.
        ``state``: the row's state now, when the worker knows it (``running``: clients waiting for the end
        need not look)."""
        hub = self.hub or self._find_hub()
        message = f"{kind} {row_id}{' ' + state if state else ''}"
        if hub is not None:
            _send(self.sock, CHANGED + message.encode(), hub)
        elif self.engine is not None:  # another host: through the database
            from sqlalchemy.exc import SQLAlchemyError

            try:
                with self.engine.begin() as connection:
                    notify(connection, CHANGED_CHANNEL, message)
            except SQLAlchemyError:  # unreachable for now: the clients' poll covers it
                pass

    def close(self) -> None:
        if self.pg is not None:
            self.pg.close()
        self.sock.close()
