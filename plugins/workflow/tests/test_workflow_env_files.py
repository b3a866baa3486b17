"""Env files end to end: the seed README example and SDK-style files run with `rolloutgym run`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rolloutgym.runner import run

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "refund_agent.py"

SDK_BUILDER_FILE = """
from rolloutgym.declarative import (
    Environment, Task,
    lookup_tool, action_tool, mock_tool,
    custom_tool, custom_config,
    workflow_config, code_editing_config,
    browser_page, browser_config,
    primitive, verifier_config,
)

env = Environment(
    slug="refund-agent",
    name="Refund Agent",
    template="workflow",
    config=workflow_config(
        tools=[
            lookup_tool("get_order", from_array="orders", match_field="id",
                        description="Read an order.", params_schema={"id": "string"}),
            action_tool("refund", state_array="refunds",
                        description="Issue a refund.",
                        params_schema={"order_id": "string", "amount": "number"}),
        ],
        fixtures={"orders": [{"id": "O-1", "customer": "Alice", "amount": 100}]},
        initial_mutable_state={"refunds": []},
    ),
    tasks=[
        Task(instruction="Refund order O-1 for $100",
             hidden_ground_truth={"refunds": [{"order_id": "O-1", "amount": 100}]},
             reference_actions=[{"name": "get_order", "arguments": {"id": "O-1"}},
                                {"name": "refund", "arguments": {"order_id": "O-1", "amount": 100}}]),
    ],
)

env.verifier = verifier_config(
    primitive("called_lookup", "tool_was_called", tool="get_order", weight=1),
    primitive("refunds_count", "state_match",
              expected={"refunds.length": 1}, weight=2),
    primitive("no_errors", "no_tool_errors", weight=1),
)
"""


@pytest.mark.parametrize(("policy", "expected"), [("oracle", 1.0), ("null", 0.0)])
def test_seed_readme_example_runs(tmp_path: Path, policy: str, expected: float):
    result = run(str(EXAMPLE), policy=policy, out=tmp_path / "run.jsonl")
    assert result.header["env"]["id"] == "file/refund-agent-v0"
    assert result.header["env"]["source"] == f"file:{EXAMPLE}"
    assert result.summary.mean_reward == expected


def test_sdk_builder_file_with_weighted_verifier(tmp_path: Path):
    path = tmp_path / "builder_env.py"
    path.write_text(SDK_BUILDER_FILE)
    oracle = run(str(path), policy="oracle", out=None)
    assert oracle.summary.mean_reward == 1.0
    null = run(str(path), policy="null", out=None)
    # The SDK's weights: only no_tool_errors (1 of 4) passes when nothing is done.
    assert null.summary.mean_reward == pytest.approx(0.25)
    payload_path = tmp_path / "builder_env.json"
    from rolloutgym.declarative import load_env_file

    payload_path.write_text(json.dumps(load_env_file(path).to_payload()))
    assert run(str(payload_path), policy="oracle", out=None).summary.mean_reward == 1.0


def test_cli_reports_a_malformed_env_file_without_a_traceback(tmp_path: Path):
    path = tmp_path / "typo_env.py"
    path.write_text(SDK_BUILDER_FILE.replace('"number"', '"nubmer"'))
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "from rolloutgym.cli import console_main; console_main()",
            "run",
            str(path),
            "--policy",
            "oracle",
            "-q",
            "-o",
            str(tmp_path / "r.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode != 0
    assert "config.tools[1].paramsSchema.amount: unknown type 'nubmer'. Did you mean 'number'?" in output
    assert "Traceback" not in output
