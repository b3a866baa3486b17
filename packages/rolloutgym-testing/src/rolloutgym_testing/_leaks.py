"""Snapshots of process resources, to prove an environment leaves nothing behind."""

from __future__ import annotations

import gc
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LeakSnapshot"]


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    proc = Path("/proc")
    if not proc.exists():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


@dataclass
class LeakSnapshot:
    """Live threads, child processes and temp-dir entries at one moment."""

    threads: set[str] = field(default_factory=set)
    children: set[int] = field(default_factory=set)
    temp_entries: set[str] = field(default_factory=set)

    @classmethod
    def take(cls) -> LeakSnapshot:
        gc.collect()
        threads = {f"{thread.name}#{thread.ident}" for thread in threading.enumerate() if thread.is_alive()}
        try:
            temp_entries = set(os.listdir(tempfile.gettempdir()))
        except OSError:
            temp_entries = set()
        return cls(threads, _children(os.getpid()), temp_entries)

    def leaks_since(self, before: LeakSnapshot, *, settle: float = 2.0, temp_dir: str | None = None) -> list[str]:
        """What exists now but not in ``before`` (waits up to ``settle`` s for cleanup).

        With ``temp_dir``, temp files are checked there (it should start empty) instead
        of in the shared temp directory.
        """
        deadline = time.monotonic() + settle
        while True:
            now = LeakSnapshot.take()
            if temp_dir is not None:
                now.temp_entries = set(os.listdir(temp_dir))
                before = LeakSnapshot(before.threads, before.children, set())
            problems = []
            new_threads = now.threads - before.threads
            if new_threads:
                problems.append(f"threads still running: {sorted(new_threads)}")
            new_children = now.children - before.children
            if new_children:
                problems.append(f"child processes still running: {sorted(new_children)}")
            new_temp = now.temp_entries - before.temp_entries
            if new_temp:
                problems.append(f"temp files left in {temp_dir or tempfile.gettempdir()}: {sorted(new_temp)[:10]}")
            if not problems or time.monotonic() >= deadline:
                return problems
            time.sleep(0.05)
