"""Who owns a sandbox: ``host/pid/start-time`` of the creating process, so a reaper can tell a dead
run's leftovers (the process is gone, or its pid was reused by another process) from a live run's."""

from __future__ import annotations

import functools
import os
import socket

__all__ = ["owner_alive", "owner_label"]


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[19] if len(fields) > 19 else None


@functools.cache
def owner_label() -> str:
    """This process as an owner label (cached: a forked child computes its own after fork)."""
    return f"{socket.gethostname()}/{os.getpid()}/{_start_time(os.getpid()) or 0}"


def owner_alive(label: str) -> bool:
    """Whether the process named by ``label`` still runs. A label of another host counts as alive
    (that host's reaper owns it); a malformed one as dead."""
    host, _, rest = label.partition("/")
    pid_text, _, start = rest.partition("/")
    if not host or not pid_text.isdigit():
        return False
    if host != socket.gethostname():
        return True
    return _start_time(int(pid_text)) == start


os.register_at_fork(after_in_child=owner_label.cache_clear)
