"""What a newcomer meets on the CLI (issue 18): a fresh process per command, real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFUND = ROOT / "examples" / "refund_agent.py"


def cli(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, COLUMNS="200", **env)
    return subprocess.run([sys.executable, "-m", "rolloutgym", *args], capture_output=True, text=True, cwd=cwd, env=environment, timeout=120)


def test_info_accepts_an_env_file_like_run(tmp_path: Path) -> None:
    shown = cli("info", str(REFUND))
    assert shown.returncode == 0, shown.stderr
    assert "file/refund-agent-v0" in shown.stdout and f"file:{REFUND}" in shown.stdout
    assert "tasks: 1" in shown.stdout and "tools: lookup_order, refund" in shown.stdout
    assert "oracle" in shown.stdout.split("policies:")[1]


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
