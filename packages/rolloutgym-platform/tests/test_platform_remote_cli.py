"""``rolloutgym run SLUG --remote`` against a real platform on 127.0.0.1: one streamed request queues the run and
follows it (``Client.follow_run``); in a terminal it shows a progress bar, and Ctrl-C detaches while the run goes
on."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time

import pytest
from rolloutgym import Client
from rolloutgym.platform.errors import ResourceNotFound

LEASE = 3.0  # the worker writes the progress every second (a third of the lease)


def _read_until(fd: int, process: subprocess.Popen, found, timeout: float = 90.0) -> str:
    """What the process wrote to the terminal ``fd`` until ``found(text)`` (or it exited, or the timeout)."""
    text, deadline = "", time.monotonic() + timeout
    while time.monotonic() < deadline and not found(text):
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                text += os.read(fd, 65536).decode(errors="replace")
            except OSError:  # the terminal's other end is closed: the process is gone
                break
        elif process.poll() is not None:
            break
    return text


def test_remote_run_streams_its_progress_and_ctrl_c_detaches(servers, slow_plugin, tmp_path) -> None:
    data = tmp_path / "data"
    key = servers.mint(data, "all", "run,push,train", "acme")
    server = servers.start(data, workers=1, lease=LEASE, env=slow_plugin)
    try:
        with Client(server.url, key) as client:
            client.push("slowtest/arith-v0")
            lines = list(client.follow_run("slowtest/arith-v0", "oracle", 1, limit=6, concurrency=1))
            assert lines[0]["state"] == "queued" and lines[-1]["state"] == "succeeded"
            assert lines[-1]["done"] == lines[-1]["total"] == 6 and lines[-1]["trajectories"] == 6
            progress = [line["done"] for line in lines if line["state"] == "running"]
            assert progress and progress == sorted(progress)  # the run's progress, streamed as it was written
            assert [line["runId"] for line in lines] == [lines[0]["runId"]] * len(lines)
            with pytest.raises(ResourceNotFound, match="no-such/env"):  # an error answers before any stream
                next(client.follow_run("no-such/env", "oracle", progress=False))

        environment = dict(os.environ, ROLLOUTGYM_ENDPOINT=server.url, ROLLOUTGYM_API_KEY=key, HOME=str(tmp_path))
        environment.update(slow_plugin, COLUMNS="120", TERM="xterm")
        command = [sys.executable, "-m", "rolloutgym", "run", "slowtest/arith-v0", "--remote", "--limit", "12"]
        main, terminal = pty.openpty()
        process = subprocess.Popen(
            command + ["-c", "1"], stdin=terminal, stdout=terminal, stderr=terminal, env=environment
        )
        os.close(terminal)
        try:
            shown = _read_until(main, process, lambda text: any(f"{k}/12" in text for k in range(1, 12)))
            assert "queued run run_" in shown and any(f"{k}/12" in shown for k in range(1, 12)), shown
            process.send_signal(signal.SIGINT)
            shown += _read_until(main, process, lambda text: "goes on" in text)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
            os.close(main)
        run_id = shown.split("queued run ")[1].split()[0]
        assert f"detached; run {run_id} goes on" in shown
        with Client(server.url, key) as client:
            detached = client.get_run(run_id)
            assert detached["state"] in ("queued", "running") and detached["done"] < 12  # Ctrl-C came mid-run
            finished = client.wait_run(run_id, timeout=120)
        assert finished["state"] == "succeeded" and finished["done"] == 12 and finished["trajectories"] == 12
    finally:
        server.stop()
