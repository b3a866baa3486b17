"""Every command that writes a file (run, export, rescore, report) answers an output it cannot write
(a full disk, no permission, no folder, a folder, a path under a file) with one line that names the
path and the fix, never a traceback; a disk that fills mid-run loses no finished task (issue 32).

The destinations work as root too (root ignores permission bits): /dev/full is a full disk,
/sys refuses new files, /proc has no room for new folders, a path under a regular file has no folder.
"""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import rolloutgym as rg
from rolloutgym.cli import main
from rolloutgym.runs import read_run
from rolloutgym_protocol.errors import OutputError, RolloutGymError


@pytest.fixture(scope="module")
def run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("outputs") / "run.jsonl"
    rg.run("toy/arith-v0", policy="oracle", num_rollouts=2, limit=3, out=path)
    return path


@pytest.fixture(autouse=True)
def dev_full_stays_a_device() -> object:
    """A report that replaced /dev/full by a regular file once broke the machine: check it never does."""
    yield
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode), "/dev/full was replaced by a file"


def destinations(tmp: Path) -> dict[str, tuple[str, str]]:
    """name -> (path, a word the one-line error must hold besides the path)."""
    (tmp / "plain-file").write_text("x")
    return {
        "full disk": ("/dev/full", "free some space"),
        "no permission": ("/sys/kernel/rolloutgym-out.jsonl", "choose a folder you can write to"),
        "no folder there": ("/proc/rolloutgym-out.jsonl", "choose another --out"),
        "folder cannot be made": ("/proc/rolloutgym-missing/deeper/out.jsonl", "cannot create the folder"),
        "under a file": (str(tmp / "plain-file" / "out.jsonl"), "is a file, not a folder"),
        "a folder": (str(tmp), "is a folder"),
    }


COMMANDS = {
    "run": lambda run, out: ["run", "toy/arith-v0", "-n", "2", "--limit", "2", "-q", "--out", out],
    "export jsonl": lambda run, out: ["export", str(run), "--out", out],
    "export sft": lambda run, out: ["export", str(run), "--format", "sft", "--out", out],
    "rescore": lambda run, out: ["rescore", str(run), "--out", out],
    "report": lambda run, out: ["report", str(run), "--out", out],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_unwritable_output_is_one_line_with_the_path_and_the_fix(
    command: str, run_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = run_file.read_bytes()
    for name, (path, word) in destinations(tmp_path).items():
        code = main(COMMANDS[command](run_file, path))
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2, (name, code, err)
        assert len(lines) == 1 and lines[0].startswith("error:"), (name, err)
        assert "Traceback" not in err
        assert path in lines[0] and word in lines[0], (name, lines[0])
    assert run_file.read_bytes() == before  # the input is untouched


def test_python_api_raises_output_error_naming_the_run_file() -> None:
    with pytest.raises(OutputError, match=r"cannot write the run file /dev/full: No space left on device") as caught:
        rg.run("toy/arith-v0", policy="oracle", limit=1, out="/dev/full")
    assert isinstance(caught.value, OSError) and isinstance(caught.value, RolloutGymError)
    assert caught.value.filename == "/dev/full"


def _limited(size: int) -> object:
    def apply() -> None:  # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


def test_a_disk_that_fills_mid_run_loses_no_finished_task_and_resume_completes(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    command = [sys.executable, "-m", "rolloutgym", "run", "toy/arith-v0", "-n", "4", "-q", "--seed", "3"]
    environment = dict(os.environ, COLUMNS="300")
    full = subprocess.run(
        [*command, "--out", str(out)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        preexec_fn=_limited(16_384),
    )
    lines = [line for line in full.stderr.splitlines() if line.strip()]
    assert full.returncode == 2 and len(lines) == 1, full.stderr
    assert "cannot write the run file" in lines[0] and str(out) in lines[0] and "--resume" in lines[0]
    written = out.read_bytes()
    assert 0 < len(written) <= 16_384 and not written.endswith(b"\n")  # the line in flight is torn
    kept = [json.loads(text) for text in written.split(b"\n")[1:-1]]
    assert kept and f"the {len(kept)} finished task(s)" in lines[0]
    resumed = subprocess.run(
        [*command, "--out", str(out), "--resume"], capture_output=True, text=True, env=environment, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    run = read_run(out)
    assert run.complete and len(run.task_indices) == len(set(run.task_indices))
    assert [group.to_dict() for group in run.groups[: len(kept)]] == [
        {key: value for key, value in line.items() if key not in ("kind", "task_index")} for line in kept
    ]
