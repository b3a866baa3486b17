"""The pipe between a SQL worker and its parent: length-prefixed pickles on raw descriptors
(one ``writev`` per message, a registered ``poll`` and usually one ``read`` per reply)."""

from __future__ import annotations

import os
import struct
import time
from typing import Any

__all__ = ["HEADER", "WorkerDied", "read_message", "write_all"]


HEADER = struct.Struct("!Q")
# The first read of a reply asks for this much (most replies fit: one system call).
_FIRST_READ = 64 * 1024


class WorkerDied(Exception):
    """The worker was killed (time limit) or died (memory limit, crash)."""


def write_all(descriptor: int, header: bytes, payload: bytes) -> None:
    """Write a header and its payload with one system call where the pipe takes it all (no joined copy)."""
    written = os.writev(descriptor, (header, payload))
    if written == len(header) + len(payload):
        return
    rest = memoryview(header + payload if written < len(header) else payload)[
        written if written < len(header) else written - len(header) :
    ]
    while rest:
        rest = rest[os.write(descriptor, rest) :]


def read_message(descriptor: int, deadline: float | None = None, waiter: Any = None) -> bytes | bytearray:
    """One length-prefixed message: usually one ``read``; a large one is read into its final buffer.

    With a poll ``waiter``, waits at most until ``deadline`` (monotonic) for each chunk and
    raises WorkerDied("timeout") beyond it; end of file raises WorkerDied("the worker exited").
    """
    # Only one message is ever in flight each way, so reading ahead cannot take part of the next one.
    head = b""
    while len(head) < HEADER.size:
        _wait_readable(waiter, deadline)
        chunk = os.read(descriptor, _FIRST_READ)
        if not chunk:
            raise WorkerDied("the worker exited")
        head += chunk
    size = HEADER.unpack_from(head)[0]
    filled = len(head) - HEADER.size
    if filled >= size:
        return head[HEADER.size : HEADER.size + size]
    body = bytearray(size)
    view = memoryview(body)
    view[:filled] = head[HEADER.size :]
    while filled < size:
        _wait_readable(waiter, deadline)
        count = os.readv(descriptor, [view[filled:]])
        if not count:
            raise WorkerDied("the worker exited")
        filled += count
    return body


def _wait_readable(waiter: Any, deadline: float | None) -> None:
    if waiter is None or deadline is None:
        return
    left_ms = (deadline - time.monotonic()) * 1000
    if left_ms <= 0 or not waiter.poll(left_ms):
        raise WorkerDied("timeout")
