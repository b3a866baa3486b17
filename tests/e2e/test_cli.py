"""The CLI end to end, as a user runs it: a fresh process per command, real files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ENV = dict(os.environ, COLUMNS="200")


def cli(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rolloutgym", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        env=ENV,
        timeout=120,
    )


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_run_show_compare_rescore(tmp_path: Path) -> None:
    oracle, null = tmp_path / "oracle.jsonl", tmp_path / "null.jsonl"
    result = cli(
        "run", "toy/guess-v0", "--policy", "oracle", "-n", "4", "--limit", "5", "--seed", "1", "-o", str(oracle)
    )
    assert result.returncode == 0, result.stderr
    assert "pass rate 100.0%" in result.stdout
    header, *groups = lines(oracle)
    assert header["kind"] == "header" and header["env"]["id"] == "toy/guess-v0" and header["num_rollouts"] == 4
    assert header["versions"]["rolloutgym"] and header["seed"] == 1
    assert len(groups) == 5 and all(len(group["trajectories"]) == 4 for group in groups)
    assert cli("run", "toy/guess-v0", "-p", "null", "-n", "4", "--limit", "5", "-o", str(null)).returncode == 0

    shown = cli("show", str(null))  # five alike rows: three shown, the rest folded into one
    assert shown.returncode == 0 and "pass rate 0.0%" in shown.stdout and "2 more alike" in shown.stdout
    every = cli("show", str(null), "--rows", "0")
    assert every.returncode == 0 and "guess-04" in every.stdout and "more alike" not in every.stdout
    data = json.loads(cli("show", str(oracle), "--json").stdout)
    assert data["pass_rate"] == 1.0 and data["pass_at"]["4"] == 1.0 and data["num_trajectories"] == 20

    compared = cli("compare", str(oracle), str(null))
    assert compared.returncode == 0 and "-100%" in compared.stdout

    rescored = cli("rescore", str(oracle), "-o", str(tmp_path / "rescored.jsonl"))
    assert rescored.returncode == 0 and "0 scores changed" in rescored.stdout


def test_compare_refuses_different_envs_without_force(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    cli("run", "toy/guess-v0", "--limit", "2", "-o", str(a))
    cli("run", "toy/arith-v0", "--limit", "2", "-o", str(b))
    refused = cli("compare", str(a), str(b))
    assert refused.returncode == 2 and "not comparable" in refused.stderr and "Traceback" not in refused.stderr
    assert cli("compare", str(a), str(b), "--force").returncode == 0


def test_user_mistakes_exit_2_without_a_traceback(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.jsonl"
    cli("run", "toy/arith-v0", "--limit", "3", "-o", str(corrupt))
    text = corrupt.read_text().splitlines()
    record = json.loads(text[2])
    record["trajectories"][0]["steps"][0]["reward"] = "high"
    text[2] = json.dumps(record)
    corrupt.write_text("\n".join(text) + "\n")
    cases = [
        (("run", "toy/gess-v0"), "Did you mean"),
        (("run", "toy/guess-v0", "-p", "nope"), "no policy provider 'nope'"),
        (("run", "toy/guess-v0", "-n", "0"), "at least 1"),
        (("run", "toy/guess-v0", "--split", "holdout"), "its splits are"),
        (("run", "toy/guess-v0", "--tasks", "nope-1"), "no task 'nope-1'"),
        (("show", str(tmp_path / "missing.jsonl")), "does not exist"),
        (("show", str(corrupt)), "corrupt.jsonl:3: invalid group line, field 'trajectories[0].steps[0].reward'"),
        (("run", "toy/guess-v0", "--resume"), "--resume needs --out"),
        (("export", str(corrupt.with_name("x.jsonl")), "--format", "nope"), "no export format 'nope'"),
    ]
    for arguments, message in cases:
        result = cli(*arguments)
        assert result.returncode == 2, (arguments, result.stdout, result.stderr)
        assert message in result.stderr, (arguments, result.stderr)
        assert "Traceback" not in result.stderr


def test_rollout_run_alias(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from rolloutgym.cli import run_main; sys.exit(run_main())",
            "toy/arith-v0",
            "--limit",
            "2",
            "-o",
            str(tmp_path / "r.jsonl"),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert len(lines(tmp_path / "r.jsonl")) == 3


SLOW_RUN = textwrap.dedent(
    """
    import sys, time
    import rolloutgym as rg
    from rolloutgym.builtin.policies import OraclePolicy

    class SlowOracle(OraclePolicy):
        def for_env(self, env):
            act = super().for_env(env)
            def slow(observation):
                time.sleep(0.02)
                return act(observation)
            return slow

    rg.run("toy/guess-v0", policy="oracle", policy_object=SlowOracle(), num_rollouts=2, seed=5,
           concurrency=2, out=sys.argv[1], resume=len(sys.argv) > 2)
    """
)


def _normalise(path: Path) -> list:
    header, *groups = lines(path)
    result = []
    for group in groups:
        for trajectory in group["trajectories"]:
            trajectory["metadata"].pop("elapsed_seconds", None)
        result.append(group)
    return sorted(result, key=lambda group: group["task_index"])


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_result(tmp_path: Path) -> None:
    script = tmp_path / "slow_run.py"
    script.write_text(SLOW_RUN)
    killed = tmp_path / "killed.jsonl"
    process = subprocess.Popen([sys.executable, str(script), str(killed)], env=ENV)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if killed.exists() and len(killed.read_text().splitlines()) >= 6:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    partial = len(killed.read_text().splitlines()) - 1
    assert 5 <= partial < 30, f"kill landed after {partial} groups"
    subprocess.run([sys.executable, str(script), str(killed), "--resume"], check=True, env=ENV, timeout=120)
    full = tmp_path / "full.jsonl"
    subprocess.run([sys.executable, str(script), str(full)], check=True, env=ENV, timeout=120)
    resumed_groups, full_groups = _normalise(killed), _normalise(full)
    assert [g["task_index"] for g in resumed_groups] == list(range(30))  # no duplicates, none lost
    assert resumed_groups == full_groups
    shown = cli("show", str(killed))
    assert "incomplete" not in shown.stdout and "pass rate 100.0%" in shown.stdout


def test_resume_refuses_a_different_run(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    cli("run", "toy/arith-v0", "--limit", "2", "-o", str(path))
    result = cli("run", "toy/arith-v0", "--limit", "2", "-p", "null", "-o", str(path), "--resume")
    assert result.returncode == 2 and "cannot resume" in result.stderr
    again = cli("run", "toy/arith-v0", "--limit", "2", "-o", str(path))
    assert again.returncode == 2 and "already exists" in again.stderr


def test_play_with_the_human_policy() -> None:
    guesses = "".join(f'/call guess {{"number": {n}}}\n' for n in (5, 8, 7))
    result = cli(
        "play",
        "toy/guess-v0",
        "--task",
        "guess-00",
        stdin='/call guess {"number": "x"}\n/call guess {bad json\n' + guesses,
    )
    assert result.returncode == 0, result.stderr
    assert "[tool] error: call the 'guess' tool" in result.stdout  # invalid arguments are shown, not fatal
    assert "error: arguments must be a JSON object" in result.stdout  # malformed input is re-asked
    assert "reward 1" in result.stdout and "found 7 in 3 guesses" in result.stdout


def test_play_answers_then_ends() -> None:
    result = cli("play", "toy/arith-v0", "--task", "0", stdin="I think 5\n")
    assert result.returncode == 0 and "reward 0" in result.stdout and "expected" in result.stdout


def test_info_and_plugins() -> None:
    info = cli("info", "toy/guess-v0")
    assert (
        info.returncode == 0
        and "tasks: 30" in info.stdout
        and "tools: guess" in info.stdout
        and "oracle" in info.stdout
    )
    plugins = cli("plugins")
    assert plugins.returncode == 0 and "builtin" in plugins.stdout and "loaded" in plugins.stdout


def test_export_jsonl(tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    cli("run", "toy/arith-v0", "--limit", "3", "-n", "2", "-o", str(run))
    result = cli("export", str(run), "--format", "jsonl", "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 0, result.stderr
    records = lines(tmp_path / "out.jsonl")
    assert len(records) == 6 and records[0]["reward"] == 1.0 and records[0]["task_id"] == "arith-00"
