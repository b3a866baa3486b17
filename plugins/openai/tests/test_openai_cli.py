"""``rolloutgym run ... --policy openai:MODEL --base-url URL`` end to end, against a REAL
local HTTP server (``ChatCompletionsServer`` on 127.0.0.1) and the installed CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rolloutgym_openai.testing import ChatCompletionsServer, Reply


def run_cli(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rolloutgym", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


def test_cli_run_records_usage_in_the_run_file(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with ChatCompletionsServer([Reply(content="I think 5")]) as server:
        result = run_cli(
            "run",
            "toy/arith-v0",
            "--policy",
            "openai:test-model",
            "--base-url",
            server.url,
            "--limit",
            "1",
            "-q",
            "--out",
            str(out),
        )
    assert result.returncode in (0, 1), result.stderr  # 1 = no trajectory passed
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    steps = lines[-1]["trajectories"][0]["steps"]
    assert steps[0]["action"] == "I think 5"
    assert steps[0]["policy_info"]["usage_total"]["completion_tokens"] == 3


def test_cli_missing_key_is_a_clean_error() -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    result = run_cli("run", "toy/arith-v0", "--policy", "openai:gpt-4o-mini", "--limit", "1", "-q", env=env)
    assert result.returncode != 0
    assert "set OPENAI_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr
