"""The child side of a sandboxed run (:mod:`.worker_sandbox`): ``python -I -m rolloutgym_platform.sandboxed_run FD``.

It reads the run's :class:`~rolloutgym.RunConfig` keywords as JSON on stdin, runs them, and writes one JSON
object per line to the file descriptor ``FD``: ``{"total": T, "done": D}`` when the run starts, the counters
after each group, then ``{"final": {...}}`` or ``{"error": "one line"}``. It runs inside the sandbox as an
unprivileged uid, so what it writes is only as trustworthy as the code it runs: the worker reads these lines
as numbers to show, bounded and checked.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any


def _emitter(fd: int) -> Any:
    stream = os.fdopen(fd, "w", buffering=1, encoding="utf-8")

    def emit(**values: Any) -> None:
        stream.write(json.dumps(values) + "\n")

    return emit


def _hooks(emit: Any, pass_threshold: float) -> tuple[Any, Any]:
    counts = {"done": 0, "passes": 0, "trajectories": 0, "errors": 0}

    def on_start(header: dict[str, Any], remaining: int) -> None:
        counts["done"] = len(header.get("tasks") or []) - remaining if header.get("tasks") else 0
        emit(total=counts["done"] + remaining, done=counts["done"])

    def on_group(task_index: int, group: Any) -> None:
        counts["done"] += 1
        counts["passes"] += sum(score.value >= pass_threshold for score in group.scores)
        counts["trajectories"] += len(group.scores)
        counts["errors"] += len(group.errors)
        emit(**counts)

    return on_start, on_group


def main() -> None:
    from rolloutgym import RunConfig, arun

    from .worker_lease import describe, hide_path

    emit = _emitter(int(sys.argv[1]))
    spec = json.loads(sys.stdin.read())
    hide_path(spec.pop("hide"))
    try:
        config = RunConfig(**spec)
        on_start, on_group = _hooks(emit, config.pass_threshold)
        result = asyncio.run(arun(config, on_start=on_start, on_group=on_group))
    except Exception as exc:
        emit(error=describe(exc))
        sys.exit(1)
    summary = result.summary
    final = {
        "total": len(result.task_indices),
        "done": len(result.task_indices),
        "passes": round(summary.pass_rate * summary.num_trajectories),
        "trajectories": summary.num_trajectories,
        "errors": summary.num_errors,
        "pass_rate": summary.pass_rate,
    }
    emit(final=final)


if __name__ == "__main__":
    main()
