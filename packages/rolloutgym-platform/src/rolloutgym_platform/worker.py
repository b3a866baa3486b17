"""Worker processes: claim queued runs and jobs from the database (with a lease) and execute them.

This module is the worker's loop; executing a run is in ``worker_runs`` (the run file, resume
after a lost lease; a run that executes code a push key chose runs in the sandbox as an
unprivileged user, ``worker_sandbox``, never in this process nor in the API process), a
training job in ``worker_jobs``, the lease's heartbeat in ``worker_lease``.

An idle worker waits on its :class:`~.notify.Listener`: the API wakes it when work is queued,
and it looks at the queue every ``--poll`` seconds anyway (a lease that ran out, a lost
wake-up). It tells the API when a row changed (its claim, each heartbeat, the end of a run or
job), which answers the clients waiting on that row.

``python -m rolloutgym_platform.worker --data DIR [--database URL] [--poll S]`` runs one worker.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from . import db
from .models import Job, RunRow
from .notify import Listener
from .worker_jobs import execute_job
from .worker_lease import hide_path
from .worker_runs import claim_values, execute_run


def work_once(
    sessions: sessionmaker[Session],
    data: Path,
    owner: str,
    lease: float,
    ray: str | None = None,
    listener: Listener | None = None,
) -> bool:
    """Claim and execute one run (else one job); False when nothing was queued.

    The claim itself records the lease and the run file's path; the worker then reports the row
    changed (its clients see it running) and starts at once, with no other write before the work.
    """
    claimed = db.claim(sessions, RunRow, owner, lease, claim_values)
    if claimed is not None:
        run, previous = claimed
        if listener is not None:
            listener.changed("run", run.id, run.state)
        execute_run(sessions, data, run, owner, lease, ray, listener, previous=previous)
        if listener is not None:  # finished (or failed, or lost): the clients waiting on it look now
            listener.changed("run", run.id)
        return True
    claimed = db.claim(sessions, Job, owner, lease)
    if claimed is not None:
        job = claimed[0]
        execute_job(sessions, data, job, owner, lease, listener)
        if listener is not None:
            listener.changed("job", job.id)
        return True
    return False


def idle(listener: Listener, poll: float, alive: Any) -> None:
    """Wait until the API wakes this worker, or ``poll`` seconds pass; checks ``alive()`` every 5 s meanwhile."""
    deadline = time.monotonic() + poll
    while alive():
        remaining = deadline - time.monotonic()
        if remaining <= 0 or listener.wait(min(remaining, 5.0)):
            return


def work(
    data: str | Path,
    database: str | None = None,
    *,
    lease: float = 30.0,
    poll: float = 1.0,
    parent: int | None = None,
    ray: str | None = None,
) -> None:
    """Execute queued work until the process is stopped (or its ``parent`` process is gone).

    Between pieces of work it waits for the API's wake-up (work queued), or ``poll`` seconds.

    With ``ray`` (a Ray address such as ``auto`` or ``ray://HOST:10001``) each run's rollouts
    execute on that Ray cluster through rolloutgym's Ray executor; this process still claims
    the run, writes its run file and trains jobs.
    """
    data = Path(data).resolve()
    hide_path(data)  # errors recorded for clients name files relative to the data folder
    sessions = db.open_database(data, database)
    owner = f"{socket.gethostname()}:{os.getpid()}:{time.time_ns() % 1_000_000}"
    listener = Listener(data, sessions.kw["bind"])  # on PostgreSQL it also LISTENs for queued work

    def alive() -> bool:
        return parent is None or os.getppid() == parent

    try:
        while alive():
            listener.hello()  # before looking at the queue: work queued after the look wakes this worker
            try:
                worked = work_once(sessions, data, owner, lease, ray, listener)
            except SQLAlchemyError as error:  # the database is unreachable for now: look again after the poll
                print(f"worker {owner}: {str(error).splitlines()[0]}", file=sys.stderr, flush=True)
                worked = False
            if not worked:
                idle(listener, poll, alive)
    finally:
        listener.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m rolloutgym_platform.worker")
    parser.add_argument("--data", required=True)
    parser.add_argument("--database", default=None)
    parser.add_argument("--lease", type=float, default=30.0)
    parser.add_argument("--poll", type=float, default=1.0, help="Seconds between looks at the queue when idle.")
    parser.add_argument("--ray", default=None, help="Run the rollouts on this Ray cluster (e.g. auto).")
    parser.add_argument("--parent", type=int, default=None, help="Exit when this process (the server) is gone.")
    arguments = parser.parse_args(argv)
    try:
        work(
            arguments.data,
            arguments.database,
            lease=arguments.lease,
            poll=arguments.poll,
            parent=arguments.parent,
            ray=arguments.ray,
        )
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
