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


def _many_tasks_run(path: Path, tasks: int) -> None:
    """A run file of ``tasks`` one-step tasks, 4 tries each; task i passes (i * 7) % 5 of its 4 tries."""
    step = {"observation": "o", "action": "a", "reward": 0.0, "next_observation": "n"}
    header = {
        "kind": "header",
        "format_version": 1,
        "run_id": "many",
        "created_at": "2026-01-01T00:00:00+00:00",
        "env": {"id": "toy/guess-v0", "version": 0},
        "policy": "random",
        "num_rollouts": 4,
        "tasks": [f"t{index:03d}" for index in range(tasks)],
        "task_indices": list(range(tasks)),
    }
    lines = [json.dumps(header)]
    for index in range(tasks):
        passes = (index * 7) % 5
        values = [1.0 if member < passes else 0.0 for member in range(4)]
        trajectories = [
            {
                "initial_observation": "start",
                "steps": [dict(step, terminated=True, truncated=False, reward=value)],
                "terminated": True,
                "truncated": False,
            }
            for value in values
        ]
        group = {"kind": "group", "task_index": index, "item_id": f"t{index:03d}", "trajectories": trajectories}
        lines.append(json.dumps(dict(group, scores=[{"value": value} for value in values])))
    path.write_text("\n".join(lines) + "\n")


def _task_rows(stdout: str) -> list[str]:
    return [line.split()[1] for line in stdout.splitlines() if line.startswith("│ t")]


def test_show_bounds_the_per_task_table_of_a_large_run(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    _many_tasks_run(out, 70)
    shown = cli("show", str(out))
    assert shown.returncode == 0, shown.stderr
    rows = _task_rows(shown.stdout)
    # the 40 with the lowest pass rate, worst first (ties in run order): 14 tasks at 0%, 14 at 25%, ...; tasks with
    # the same numbers past three are folded into one "… N more alike" row
    assert rows[:4] == ["t000", "t005", "t010", "t003"]
    assert "… 11 more alike" in shown.stdout
    assert "Per task: the 40 of 70 with the lowest pass rate" in shown.stdout
    assert "30 more tasks not shown: '--rows 0' shows every task" in shown.stdout
    every = cli("show", str(out), "--rows", "0")
    assert _task_rows(every.stdout) == [f"t{index:03d}" for index in range(70)] and "not shown" not in every.stdout
    assert _task_rows(cli("show", str(out), "--rows", "3").stdout) == ["t000", "t005", "t010"]
    few = tmp_path / "few.jsonl"
    _many_tasks_run(few, 12)  # up to the limit: every task, in run order, as before
    small = cli("show", str(few))
    assert _task_rows(small.stdout) == [f"t{index:03d}" for index in range(12)] and "not shown" not in small.stdout
    head = [line for line in shown.stdout.splitlines() if line.startswith("pass")]
    assert head == [line for line in every.stdout.splitlines() if line.startswith("pass")]  # same numbers
    assert head[0].startswith("pass rate 50.0%")
    assert cli("show", str(out), "--rows", "-1").returncode == 2
