"""Process-table helpers (Linux ``/proc``) used to find and account for browser processes."""

from __future__ import annotations

from pathlib import Path

__all__ = ["descendants"]


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int) -> list[tuple[int, list[str]]]:
    """Live descendants of ``pid`` with their command lines (empty on systems without /proc)."""
    if not Path("/proc").exists():
        return []
    parents = _parents()
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found: list[tuple[int, list[str]]] = []
    stack = list(children.get(pid, []))
    while stack:
        current = stack.pop()
        try:
            command = (Path("/proc") / str(current) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        found.append((current, [part.decode(errors="replace") for part in command if part]))
        stack.extend(children.get(current, []))
    return sorted(found)
