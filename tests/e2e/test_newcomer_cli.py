"""What a newcomer meets on the CLI (issue 18): a fresh process per command, real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFUND = ROOT / "examples" / "refund_agent.py"


def cli(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, COLUMNS="200", **env)
    return subprocess.run(
        [sys.executable, "-m", "rolloutgym", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=120,
    )


def test_info_accepts_an_env_file_like_run(tmp_path: Path) -> None:
    shown = cli("info", str(REFUND))
    assert shown.returncode == 0, shown.stderr
    assert "file/refund-agent-v0" in shown.stdout and f"file:{REFUND}" in shown.stdout
    assert "tasks: 1" in shown.stdout and "tools: lookup_order, refund" in shown.stdout
    assert "oracle" in shown.stdout.split("policies:")[1]


def test_play_accepts_an_env_file_like_run_and_info() -> None:
    """``play FILE`` plays the env file that ``run FILE`` and ``info FILE`` read (issue 46: it refused it)."""
    played = subprocess.run(
        [sys.executable, "-m", "rolloutgym", "play", str(REFUND)],
        input="I cannot help with that\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    assert "Refund order O-1" in played.stdout and "episode over after 1 steps" in played.stdout
    assert "missing refund for order_id" in played.stdout  # graded by the file's own checks


def test_info_on_a_file_env_id_points_at_the_path() -> None:
    shown = cli("info", "file/refund-agent-v0")
    assert shown.returncode != 0 and "Traceback" not in shown.stderr
    assert "id of an env file" in shown.stderr and "rolloutgym info path/to/" in shown.stderr


def test_env_file_run_error_sends_users_to_a_working_info_command(tmp_path: Path) -> None:
    failed = cli("run", str(REFUND), "-p", "oracle", "--task", "nope", "-o", str(tmp_path / "run.jsonl"))
    assert failed.returncode != 0 and "has no task 'nope'" in failed.stderr
    suggested = failed.stderr.split("Run 'rolloutgym info ")[1].split("'")[0]
    assert suggested == str(REFUND)
    assert cli("info", suggested).returncode == 0


def test_compare_runs_over_different_task_sets_compares_the_common_tasks(tmp_path: Path) -> None:
    oracle, null = tmp_path / "oracle.jsonl", tmp_path / "null.jsonl"
    assert cli("run", "toy/guess-v0", "-p", "oracle", "-n", "2", "--limit", "5", "-o", str(oracle)).returncode == 0
    assert cli("run", "toy/guess-v0", "-p", "null", "-n", "2", "--limit", "3", "-o", str(null)).returncode == 0
    compared = cli("compare", str(oracle), str(null))
    assert compared.returncode == 0, compared.stderr
    assert "3 in common, 2 only in A" in compared.stdout and "0 only in B" in compared.stdout
    # the null policy scores 0 and the oracle 1 on every common task: the delta is over those tasks only
    assert "over the 3 common tasks: pass rate 100.0% → 0.0% (-100.0%)" in compared.stdout
    same = cli("compare", str(oracle), str(oracle))
    assert "overall pass rate 100.0% → 100.0% (+0.0%)" in same.stdout and "common" not in same.stdout


def test_show_and_report_treat_a_torn_last_line_alike_and_resume_repairs_it(tmp_path: Path) -> None:
    run = tmp_path / "killed.jsonl"
    command = ["run", "toy/guess-v0", "-p", "oracle", "-n", "2", "--limit", "4", "-o", str(run)]
    assert cli(*command).returncode == 0
    run.write_text(run.read_text()[:-150])  # a run killed mid-write: the last group line is cut off
    shown = cli("show", str(run))
    assert shown.returncode == 0, shown.stderr
    assert "3 tasks" in shown.stdout
    hint = "last line was cut off mid-write"
    assert hint in shown.stderr and "--resume" in shown.stderr
    reported = cli("report", str(run), "-o", str(tmp_path / "report.html"))
    assert reported.returncode == 0, reported.stderr
    assert hint in reported.stderr and "--resume" in reported.stderr
    assert "6 trajectories" in reported.stdout
    resumed = cli(*command, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    again = cli("show", str(run))
    assert "4 tasks" in again.stdout and hint not in again.stderr


def test_a_disabled_plugin_is_named_as_disabled_not_as_missing(tmp_path: Path) -> None:
    failed = cli("run", "sql/shop-v0", "-o", str(tmp_path / "run.jsonl"), ROLLOUTGYM_DISABLE_PLUGINS="sql")
    assert failed.returncode != 0 and "Traceback" not in failed.stderr
    assert "sql plugin (rolloutgym-sql) is installed but disabled by ROLLOUTGYM_DISABLE_PLUGINS=sql" in failed.stderr
    assert "pip install" not in failed.stderr
    allow_listed = cli("run", "sql/shop-v0", "-o", str(tmp_path / "run.jsonl"), ROLLOUTGYM_PLUGINS="openai")
    assert "ROLLOUTGYM_PLUGINS=openai does not name it" in allow_listed.stderr


def test_a_missing_plugin_hint_says_how_to_install_from_the_checkout() -> None:
    from rolloutgym.registry import Registry

    core_only = Registry(load_entry_points=False)  # as if no plugin distribution were installed
    hint = core_only.install_hint("sql")  # the suite runs in the checkout's root
    assert hint.endswith("pip install ./plugins/sql") and "pip install rolloutgym-sql" not in hint  # no index serves it
    assert (ROOT / "plugins" / "sql" / "pyproject.toml").is_file()
    assert "pip install ./plugins/openai" in core_only.install_hint("openai")
    assert (ROOT / "plugins" / "openai" / "pyproject.toml").is_file()


def test_the_seed_sdks_test_one_task_row(tmp_path: Path) -> None:
    """`rollout test my_env.py --model M --task 0 --temperature 0.0` as docs/how-to/platform.md translates it."""
    pytest.importorskip("rolloutgym_transformers")
    out = tmp_path / "run.jsonl"
    ran = cli(
        "run",
        str(REFUND),
        "--policy",
        "hf:tiny",
        "--task",
        "0",
        "--policy-arg",
        "temperature=0",
        "--policy-arg",
        "max_tokens=8",
        "-o",
        str(out),
    )
    assert ran.returncode == 0, ran.stderr
    assert "1 tasks · 1 trajectories" in ran.stdout
    groups = [line for line in out.read_text().splitlines() if '"kind":"group"' in line]
    assert len(groups) == 1 and '"task_index":0' in groups[0]
    # the same option given to a policy that takes none is refused, not ignored
    refused = cli(
        "run",
        str(REFUND),
        "--policy",
        "oracle",
        "--task",
        "0",
        "--policy-arg",
        "temperature=0",
        "-o",
        str(tmp_path / "oracle.jsonl"),
    )
    assert refused.returncode == 2 and "oracle policy: unknown option(s) temperature" in refused.stderr
    assert "Traceback" not in refused.stderr
