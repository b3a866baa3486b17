"""A warm pool: started sandboxes kept ready per image and settings, handed out once, refilled behind.

A sandbox taken from the pool is never given back (a used sandbox is dirty): it is destroyed
by its owner and the pool starts a fresh one in a background thread. A ready sandbox that
waits longer than ``idle`` seconds is removed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["WarmPool"]

Start = Callable[[Mapping[str, Any]], tuple[str, dict[str, float]]]


def _key(settings: Mapping[str, Any]) -> str:
    return json.dumps(settings, sort_keys=True, default=repr)


class WarmPool:
    """Ready sandboxes by settings. ``size=0`` turns it off (every ``take`` starts one)."""

    def __init__(self, start: Start, remove: Callable[[str], None], *, size: int = 0, idle: float = 300.0) -> None:
        self.start, self.remove, self.size, self.idle = start, remove, max(0, size), idle
        self._ready: dict[str, list[tuple[float, str, dict[str, float]]]] = {}
        self._filling: dict[str, int] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._threads: list[threading.Thread] = []

    def take(self, settings: Mapping[str, Any]) -> tuple[str, dict[str, float]]:
        """A started sandbox ``(id, stage seconds)``: from the pool when one is ready (its stages then
        read ``pool_wait`` only), else started now. Either way the pool is topped up behind."""
        if self.size == 0:
            return self.start(settings)
        key = _key(settings)
        self._expire(key)
        with self._lock:
            ready = self._ready.setdefault(key, [])
            entry = ready.pop(0) if ready else None
        self._refill(key, settings)
        if entry is not None:
            return entry[1], {"create": 0.0, "start": 0.0, "pool_age": round(time.monotonic() - entry[0], 3)}
        return self.start(settings)

    def fill(self, settings: Mapping[str, Any], *, wait: bool = True) -> None:
        """Start the pool's sandboxes for ``settings`` now (``wait``: until they are all ready)."""
        key = _key(settings)
        self._refill(key, settings)
        if wait:
            for thread in list(self._threads):
                thread.join()

    def ready(self, settings: Mapping[str, Any]) -> int:
        with self._lock:
            return len(self._ready.get(_key(settings), []))

    def _refill(self, key: str, settings: Mapping[str, Any]) -> None:
        with self._lock:
            if self._closed:
                return
            missing = self.size - len(self._ready.get(key, [])) - self._filling.get(key, 0)
            self._filling[key] = self._filling.get(key, 0) + max(0, missing)
        for _ in range(max(0, missing)):
            thread = threading.Thread(target=self._start_one, args=(key, dict(settings)), daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def _start_one(self, key: str, settings: Mapping[str, Any]) -> None:
        try:
            container, timings = self.start(settings)
        except Exception:  # noqa: BLE001 - a failed refill leaves the pool short; take() starts one itself
            with self._lock:
                self._filling[key] -= 1
            return
        with self._lock:
            self._filling[key] -= 1
            if not self._closed:
                self._ready.setdefault(key, []).append((time.monotonic(), container, timings))
                return
        self.remove(container)

    def _expire(self, key: str) -> None:
        now = time.monotonic()
        with self._lock:
            ready = self._ready.get(key, [])
            stale = [entry for entry in ready if now - entry[0] > self.idle]
            self._ready[key] = [entry for entry in ready if now - entry[0] <= self.idle]
        for _, container, _ in stale:
            self.remove(container)

    def close(self) -> None:
        """Remove every ready sandbox; refills still starting remove theirs when they finish."""
        with self._lock:
            self._closed = True
            entries = [entry for ready in self._ready.values() for entry in ready]
            self._ready.clear()
        for _, container, _ in entries:
            self.remove(container)
        for thread in list(self._threads):
            thread.join(timeout=30)
