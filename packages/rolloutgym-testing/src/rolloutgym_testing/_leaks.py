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
    """Live threads, child processes and temp-dir entries at one moment.

    Temp entries are those of one folder: ``temp_dir``, else :func:`tempfile.gettempdir`.
    Point that at a folder the test owns (``monkeypatch.setenv("TMPDIR", str(tmp_path))``
    and ``monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))``, or pass ``temp_dir``):
    the machine's shared ``/tmp`` gets entries from every other process on it, and a test
    that counts those fails whenever the machine is busy. Child processes are this
    process's own children, never the machine's process list.
    """

    threads: set[str] = field(default_factory=set)
    children: set[int] = field(default_factory=set)
    temp_entries: set[str] = field(default_factory=set)
    temp_dir: str | None = None  # the folder temp_entries lists (None: tempfile.gettempdir() when taken)

    @classmethod
    def take(cls, temp_dir: str | os.PathLike[str] | None = None, *, collect: bool = True) -> LeakSnapshot:
        """The snapshot now; ``collect`` runs a full garbage collection first (finalisers close what they own)."""
        if collect:
            gc.collect()
        threads = {f"{thread.name}#{thread.ident}" for thread in threading.enumerate() if thread.is_alive()}
        try:
            temp_entries = set(os.listdir(tempfile.gettempdir() if temp_dir is None else temp_dir))
        except OSError:
            temp_entries = set()
        return cls(threads, _children(os.getpid()), temp_entries, None if temp_dir is None else os.fspath(temp_dir))

    def leaks_since(
        self, before: LeakSnapshot, *, settle: float = 10.0, temp_dir: str | os.PathLike[str] | None = None
    ) -> list[str]:
        """What exists now but not in ``before`` (waits up to ``settle`` s for cleanup).

        It answers as soon as nothing is left, so ``settle`` only bounds the wait on a slow
        (loaded) machine. With ``temp_dir``, temp files are checked there instead of in
        :func:`tempfile.gettempdir`: against ``before``'s entries when ``before`` was taken
        of the same folder, else the folder should start empty (as ``tmp_path`` does).
        """
        deadline = time.monotonic() + settle
        if temp_dir is not None and before.temp_dir != os.fspath(temp_dir):
            before = LeakSnapshot(before.threads, before.children, set(), os.fspath(temp_dir))
        collected = -1.0
        while True:
            # A full collection is slow in a big process (a test worker that ran thousands of tests: seconds each):
            # one at the start, then at most one a second while waiting for threads and processes to end.
            collect = collected < 0 or time.monotonic() - collected >= 1.0
            now = LeakSnapshot.take(temp_dir, collect=collect)
            if collect:
                collected = time.monotonic()
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
