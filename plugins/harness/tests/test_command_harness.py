"""``harness:command`` end to end: ``rolloutgym run`` with a real subprocess harness that uses the
official ``openai`` client against the interception endpoint (hf:tiny); limits and crashes become
the step's stop reason, and the run file holds every call with token ids and logprobs."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from rolloutgym import arollout, get_registry
from rolloutgym.cli import main
from rolloutgym.llm import check_provenance
from rolloutgym.runs import read_run
from rolloutgym_harness import harness_trajectory
from rolloutgym_harness.harness import make_policy
from rolloutgym_protocol.errors import ConfigError, PolicyError

AGENT = """
import sys, openai
client = openai.OpenAI(max_retries=0)
messages = [{"role": "user", "content": open(sys.argv[1]).read()}]
for _ in range(int(sys.argv[2])):
    reply = client.chat.completions.create(model="m", messages=messages, max_tokens=5, logprobs=True)
    messages += [reply.choices[0].message.model_dump(exclude_none=True), {"role": "user", "content": "go on"}]
print("64")
"""


def test_run_file_holds_every_call_with_tokens(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    out = tmp_path / "run.jsonl"
    command = f"{sys.executable} {agent} {{instruction_file}} 3"
    args = [
        "run",
        "toy/arith-v0",
        "--policy",
        "harness:command",
        "--policy-arg",
        f"command={command}",
        "--policy-arg",
        "model=hf:tiny",
        "--limit",
        "1",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    run = read_run(out)
    (trajectory,) = run.groups[0].trajectories
    step = trajectory.steps[0]
    record = step.policy_info["harness"]
    assert record["stop_reason"] == "done" and record["returncode"] == 0 and step.action == "64"
    assert len(record["calls"]) == 3
    for call in record["calls"]:
        assert len(call["completion_token_ids"]) == len(call["logprobs"]) == 5
        assert call["prompt_token_ids"]
    calls = harness_trajectory(step)
    assert len(calls.steps) == 3 and check_provenance(calls) == 0 and calls.metadata["segments"] == 1
    assert calls.steps[-1].reward == step.reward


def _episode(command: str, **options: object):
    policy = make_policy("command", command=command, model="hf:tiny", **options)
    env = get_registry().make("toy/arith-v0", task=0)
    return asyncio.run(arollout(env, policy))


def test_wall_limit_kills_the_harness() -> None:
    trajectory = _episode(f"{sys.executable} -c 'import time; time.sleep(60)'", wall_limit=0.5)
    step = trajectory.steps[0]
    assert step.policy_stop_reason == "wall_limit"
    assert step.policy_info["harness"]["returncode"] < 0


def test_crash_and_max_calls_are_stop_reasons(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT + "raise SystemExit(3)\n")
    crashed = _episode(f"{sys.executable} {agent} {{instruction_file}} 1")  # made a call, then failed: scored
    assert crashed.steps[0].policy_stop_reason == "harness_error"
    assert crashed.steps[0].policy_info["harness"]["returncode"] == 3
    with pytest.raises(PolicyError, match="exited with code 3 before making any model call"):
        _episode(f"{sys.executable} -c 'raise SystemExit(3)'")  # never ran: an error (test_harness_never_ran.py)
    agent.write_text(AGENT)
    limited = _episode(f"{sys.executable} {agent} {{instruction_file}} 5", max_calls=2)
    record = limited.steps[0].policy_info["harness"]
    assert record["stop_reason"] == "max_calls" and len(record["calls"]) == 2


def test_bad_template_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="bad field 'nope'"):
        make_policy("command", command="agent {nope}", model="hf:tiny")
    with pytest.raises(ConfigError, match="known: harness:command, harness:mini-swe-agent, harness:claude-code"):
        make_policy("nope", command="x")
    with pytest.raises(ConfigError, match="model_args must be a mapping"):
        make_policy("command", command="agent", model="hf:tiny", model_args="threads=1")
