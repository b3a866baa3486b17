"""Running one command with a wall-clock deadline and a bounded output buffer.

The command runs in its own session (process group). On timeout, or when it writes more
than ``max_output_bytes``, the whole group is killed with SIGKILL. No threads are used, so a
run leaves nothing behind in the calling process.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["ProcessOutcome", "run_bounded"]

_CHUNK = 65536


@dataclass(frozen=True)
class ProcessOutcome:
    """What :func:`run_bounded` observed.

    Attributes:
        exit_code: the exit status, or ``-N`` when the process died from signal N.
        output: the first ``keep_output_bytes`` bytes of stdout and stderr together.
        output_bytes: how many bytes the process wrote in total (until it was stopped).
        timed_out: the wall-clock deadline passed and the process group was killed.
        output_limit_exceeded: the process wrote more than allowed and was killed.
        duration: seconds from start to exit.
    """

    exit_code: int
    output: bytes
    output_bytes: int
    timed_out: bool
    output_limit_exceeded: bool
    duration: float


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_bounded(
    argv: Sequence[str],
    *,
    environment: Mapping[str, str],
    cwd: str | None = None,
    timeout: float,
    keep_output_bytes: int,
    max_output_bytes: int,
) -> ProcessOutcome:
    """Run ``argv`` to completion or until a limit is hit, then reap it.

    Args:
        argv: the command line (``argv[0]`` is looked up on ``environment["PATH"]`` only if
            it has no slash; pass absolute paths).
        environment: the complete environment of the process (nothing is inherited).
        cwd: working directory of the launched process.
        timeout: wall-clock seconds before the process group is killed.
        keep_output_bytes: how much output to keep for the caller.
        max_output_bytes: the process group is killed once it has written this much.
    """
    started = time.monotonic()
    deadline = started + timeout
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(environment),
        cwd=cwd,
        close_fds=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    kept = bytearray()
    total = 0
    timed_out = False
    too_much = False
    selector = selectors.DefaultSelector()
    try:
        selector.register(process.stdout, selectors.EVENT_READ)
        open_stream = True
        while open_stream:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for _key, _events in selector.select(timeout=min(remaining, 0.5)):
                chunk = os.read(process.stdout.fileno(), _CHUNK)
                if not chunk:
                    open_stream = False
                    break
                total += len(chunk)
                if len(kept) < keep_output_bytes:
                    kept += chunk[: keep_output_bytes - len(kept)]
                if total > max_output_bytes:
                    too_much = True
                    open_stream = False
                    break
        if timed_out or too_much:
            _kill_group(process)
        else:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(process)
    finally:
        selector.close()
        process.stdout.close()
        if process.poll() is None:
            _kill_group(process)
        process.wait()
    return ProcessOutcome(
        exit_code=process.returncode,
        output=bytes(kept),
        output_bytes=total,
        timed_out=timed_out,
        output_limit_exceeded=too_much,
        duration=time.monotonic() - started,
    )
