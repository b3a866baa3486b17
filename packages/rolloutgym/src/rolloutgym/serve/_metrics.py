"""The server's counters and step latencies, as ``/metrics`` reports them."""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from typing import Any

__all__ = ["Metrics"]


def _resident_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class Metrics:
    """Counters and a window of step latencies for ``/metrics``."""

    def __init__(self, window: int = 10_000) -> None:
        self.started = time.time()
        self.sessions_created = 0
        self.sessions_closed = 0
        self.sessions_reaped = 0
        self.sessions_rejected = 0
        self.steps = 0
        self.errors = 0
        self.latencies: deque[float] = deque(maxlen=window)
        self.step_times: deque[float] = deque(maxlen=window)

    def record_step(self, seconds: float) -> None:
        self.steps += 1
        self.latencies.append(seconds)
        self.step_times.append(time.monotonic())

    def snapshot(self, open_sessions: int, max_sessions: int) -> dict[str, Any]:
        latencies = sorted(self.latencies)

        def percentile(fraction: float) -> float | None:
            if not latencies:
                return None
            return latencies[min(len(latencies) - 1, int(fraction * len(latencies)))]

        now = time.monotonic()
        recent = [moment for moment in self.step_times if now - moment <= 10.0]
        span = (now - recent[0]) if len(recent) > 1 else 0.0
        return {
            "uptime_seconds": time.time() - self.started,
            "sessions_open": open_sessions,
            "sessions_max": max_sessions,
            "sessions_created_total": self.sessions_created,
            "sessions_closed_total": self.sessions_closed,
            "sessions_reaped_total": self.sessions_reaped,
            "sessions_rejected_total": self.sessions_rejected,
            "steps_total": self.steps,
            "errors_total": self.errors,
            "steps_per_second": (len(recent) / span) if span > 0 else 0.0,
            "python_allocated_blocks": sys.getallocatedblocks(),
            "process_resident_bytes": _resident_bytes(),
            "step_latency_seconds": {
                "p50": percentile(0.5),
                "p90": percentile(0.9),
                "p99": percentile(0.99),
                "count": len(latencies),
            },
        }
