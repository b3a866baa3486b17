"""CLI output that scales: a few k values for pass@k, ids never cut off a terminal, --version, --limit 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ENV = dict(os.environ, COLUMNS="60")  # a narrow terminal width; the output is a pipe, not a TTY


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rolloutgym", *args], capture_output=True, text=True, env=ENV, timeout=180
    )


def test_pass_at_k_shows_powers_of_two_and_n(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    result = cli("run", "toy/arith-v0", "--policy", "oracle", "-n", "12", "--limit", "2", "-q", "-o", str(out))
    assert result.returncode == 0, result.stderr
    line = next(text for text in result.stdout.splitlines() if text.startswith("pass@k"))
    assert [part for part in line.split() if part.startswith("@")] == ["@1", "@2", "@4", "@8", "@12"]


def test_long_task_ids_are_never_cut_off_a_terminal(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks_env.jsonl"
    long_id = "a-task-id-that-is-much-longer-than-the-terminal-is-wide-0001"
    env = {
        "slug": "echo",
        "name": "Echo",
        "template": "custom",
        "config": {"tools": [{"name": "noop", "description": "x", "response": "ok"}], "initialState": {}},
        "tasks": [{"instruction": "say hi", "id": long_id}],
    }
    tasks.write_text(json.dumps(env) + "\n")
    out = tmp_path / "run.jsonl"
    assert cli("run", str(tasks), "--policy", "null", "-q", "-o", str(out)).returncode == 0
    shown = cli("show", str(out))
    assert shown.returncode == 0, shown.stderr
    assert long_id in shown.stdout


def test_version_and_limit_zero() -> None:
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("rolloutgym ")
    zero = cli("run", "toy/arith-v0", "--limit", "0")
    assert zero.returncode == 2 and "--limit must be at least 1" in zero.stderr
    assert cli("run", "toy/arith-v0", "-n", "0").returncode == 2


def test_runs_lists_run_files_complete_and_partial(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    complete = folder / "complete.jsonl"
    assert cli("run", "toy/arith-v0", "--policy", "oracle", "--limit", "3", "-q", "-o", str(complete)).returncode == 0
    (folder / "partial.jsonl").write_text("".join(complete.read_text().splitlines(keepends=True)[:2]))
    (folder / "junk.jsonl").write_text("not json\n")
    listed = cli("runs", str(folder))
    assert listed.returncode == 0, listed.stderr
    rows = {line.split("│")[1].strip(): line for line in listed.stdout.splitlines() if line.startswith("│")}
    assert (
        "complete" in rows["complete.jsonl"]
        and "3/3" in rows["complete.jsonl"]
        and "toy/arith-v0" in rows["complete.jsonl"]
    )
    assert "partial" in rows["partial.jsonl"] and "1/3" in rows["partial.jsonl"]
    assert "unreadable" in rows["junk.jsonl"]
    assert cli("runs", str(tmp_path / "missing")).returncode == 2
