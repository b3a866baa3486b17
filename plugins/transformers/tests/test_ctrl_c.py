"""Ctrl-C stops a ``rolloutgym run --policy hf:tiny`` on CPU within seconds, keeping what finished.

On CPU the model decodes on the event loop's thread (``TransformersSampler.threaded``), so
asyncio.run's own SIGINT handler (cancel the main task, which waits for the loop) waited for the
sample being decoded: with a real model on a 2-core CPU, minutes. The CLI now raises
KeyboardInterrupt where the main thread is. A real ``rolloutgym run`` subprocess (hf:tiny) gets
SIGINT once its first group is in the run file; in the "slow model" case every forward pass from
then on takes an hour (a stand-in for a large model on a slow CPU, patched into that subprocess),
so a run that waits for the sample never ends. The bound is on a hang, not on speed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rolloutgym.runs import read_run

HANG = 60.0  # seconds: a run that ignores Ctrl-C is still going long after this

SLOW_MODEL = """
import os, sys, time
from pathlib import Path
from rolloutgym_transformers import sampler

pick = sampler.TransformersSampler._pick

def slow_pick(self, *args):
    if Path(os.environ["SLOW_MARKER"]).exists():
        time.sleep(3600)  # a forward pass that takes an hour
    return pick(self, *args)

sampler.TransformersSampler._pick = slow_pick
from rolloutgym.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _groups(out: Path) -> int:
    return out.read_text().count('"kind":"group"') if out.exists() else 0


@pytest.mark.parametrize(
    "case", ["default", "one-at-a-time", "slow-model"], ids=["default", "one-at-a-time", "slow-model"]
)
def test_ctrl_c_stops_an_hf_run_and_keeps_the_finished_groups(tmp_path: Path, case: str) -> None:
    out, marker = tmp_path / "run.jsonl", tmp_path / "slow"
    arguments = ["run", "toy/arith-v0", "--policy", "hf:tiny", "-n", "4", "--out", str(out)]
    if case == "one-at-a-time":
        arguments += ["--concurrency", "1"]
    program = ["-c", SLOW_MODEL] if case == "slow-model" else ["-m", "rolloutgym"]
    process = subprocess.Popen(
        [sys.executable, *program, *arguments],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200", "SLOW_MARKER": str(marker)},
    )
    try:
        deadline = time.monotonic() + 300
        while _groups(out) == 0 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert process.poll() is None, "the run ended before its first group: give it more work"
        marker.write_text("")
        time.sleep(0.5)  # the slow model is now inside its hour-long forward pass
        process.send_signal(signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=HANG)
        except subprocess.TimeoutExpired:
            pytest.fail(f"rolloutgym run ignored Ctrl-C: still running {HANG:.0f} s later")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert "interrupted; the finished tasks are in" in stderr and "Traceback" not in stderr, stderr
    run = read_run(out)
    assert 1 <= len(run.groups) < 40  # toy/arith-v0 has 40 tasks: the run stopped early, its groups kept
    assert all(len(group.trajectories) == 4 for group in run.groups)


def test_an_ignored_sigint_stays_ignored(tmp_path: Path) -> None:
    """Started with SIGINT ignored (``nohup``, a background job of a script), the run is not stopped by it."""
    out = tmp_path / "run.jsonl"
    arguments = ["run", "toy/arith-v0", "--policy", "hf:tiny", "--limit", "6", "--concurrency", "1", "--out", str(out)]
    process = subprocess.Popen(
        [sys.executable, "-m", "rolloutgym", *arguments],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        deadline = time.monotonic() + 300
        while _groups(out) == 0 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert len(read_run(out).groups) == 6
