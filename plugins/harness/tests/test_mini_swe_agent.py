"""mini-swe-agent (from the registry) driven by hf:tiny through the interception endpoint on a
small code task in its own folder: every call is recorded with token ids and logprobs, and
re-rendering the recorded messages gives the recorded prompt tokens (0 mismatches; a history the
agent rewrote is a new segment). litellm is kept offline (bundled model list, no cost lookups)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rolloutgym.llm import check_provenance
from rolloutgym_harness import check_rerender, harness_trajectory
from rolloutgym_harness.harness import make_policy
from rolloutgym_harness.recording import CallRecord
from rolloutgym_protocol import Step


def test_mini_swe_agent_calls_are_recorded_exactly(tmp_path: Path) -> None:
    (tmp_path / "add.py").write_text("def add(a, b):\n    return a - b\n")
    policy = make_policy(
        "mini-swe-agent", model="hf:tiny", step_limit=2, workdir=str(tmp_path), force={"max_tokens": 12}, wall_limit=240
    )
    output = asyncio.run(policy.for_env(None).act("Fix the bug in add.py so that add(2, 3) == 5."))
    record = output.info["harness"]
    assert record["returncode"] == 0, record["stderr_tail"]
    calls = [CallRecord(**call) for call in record["calls"]]
    assert len(calls) == 2
    for call in calls:
        assert call.api == "chat.completions"
        assert len(call.completion_token_ids) == len(call.logprobs) == 12
        assert call.messages[0]["role"] == "system"
    assert check_rerender(policy.model.renderer, calls) == []
    step = Step(None, output.action, 0.0, None, True, False, policy_info=output.info)
    trajectory = harness_trajectory(step)
    new_segments = sum(call.new_segment for call in calls)
    assert trajectory.metadata["segments"] == 1 + new_segments
    assert check_provenance(trajectory) == new_segments
