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

A lost message costs at most one poll interval (``--poll``): idle workers and waiting clients
read the database that often anyway, so workers on another host (the address file names its
host; they do not use it) or an API restarted on another port only lose the wake-ups.
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

    def __init__(self, data: str | Path) -> None:
        self.sock = _datagram_socket()
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

    def close(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self.sock.fileno())
        self.sock.close()

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
                kind, _, rest = message.removeprefix(CHANGED).decode(errors="replace").partition(" ")
                row_id, _, state = rest.partition(" ")
                for watch in self.waiters.get(f"{kind} {row_id}", ()):
                    watch.report(state or None)

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
    """A worker's end: says hello to the API, waits for ``work`` (or the poll interval), reports changes."""

    def __init__(self, data: str | Path) -> None:
        self.path = address_file(data)
        self.sock = _datagram_socket()
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

    def wait(self, timeout: float) -> bool:
        """Sleep until the API says work was queued or ``timeout`` passes; True when woken."""
        ready, _, _ = select.select([self.sock], [], [], timeout)
        woken = False
        while ready:
            try:
                woken = self.sock.recv(512) == WORK or woken
            except OSError:  # drained (BlockingIOError) or an error queued on the socket
                break
        return woken

    def changed(self, kind: str, row_id: str, state: str | None = None) -> None:
        """Tell the API that the row (``kind`` run or job) changed in the database: its watchers look again.
        ``state``: the row's state now, when the worker knows it (``running``: clients waiting for the end
        need not look)."""
        hub = self.hub or self._find_hub()
        if hub is not None:
            _send(self.sock, CHANGED + f"{kind} {row_id}{' ' + state if state else ''}".encode(), hub)

    def close(self) -> None:
        self.sock.close()
