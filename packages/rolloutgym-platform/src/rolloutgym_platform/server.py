"""``rolloutgym platform serve``: the API (uvicorn) plus local worker processes over one data folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def worker_command(
    data: Path, database: str | None, lease: float, ray: str | None = None, poll: float = 1.0
) -> list[str]:
    """The command line of one worker process (``python -m rolloutgym_platform.worker``)."""
    command = [sys.executable, "-m", "rolloutgym_platform.worker", "--data", str(data), "--lease", str(lease)]
    command += ["--poll", str(poll)]
    command += ["--parent", str(os.getpid())] + (["--ray", ray] if ray else [])
    return command + (["--database", database] if database else [])


def start_workers(
    data: Path, database: str | None, count: int, lease: float, ray: str | None = None, poll: float = 1.0
) -> list[subprocess.Popen]:
    """Start ``count`` worker processes."""
    command = worker_command(data, database, lease, ray, poll)
    return [subprocess.Popen(command) for _ in range(count)]


def serve(
    data: str | Path,
    *,
    database: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8600,
    workers: int = 2,
    lease: float = 30.0,
    log_level: str = "warning",
    ray: str | None = None,
    poll: float = 1.0,
    max_push: int = 32 << 20,
) -> None:
    """Migrate the database, start the workers (their rollouts on the Ray cluster ``ray`` when given), and serve
    the API until interrupted. Idle workers are woken when work is queued, and look at the queue every ``poll``
    seconds anyway; a client waiting on a run is answered when its worker reports a change, or after ``poll`` s.
    A push body over ``max_push`` bytes is refused (413) before it is buffered."""
    import uvicorn

    from .app import create_app

    data = Path(data).resolve()
    # migrates (and writes DATA/notify.json) before any worker starts
    app = create_app(data, database, poll=poll, max_push=max_push)
    processes = start_workers(data, database, workers, lease, ray, poll)
    try:
        uvicorn.run(app, host=host, port=port, log_level=log_level)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
