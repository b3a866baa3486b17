"""A harness that acts through the env's tools over MCP: ``harness:command`` on a tool env gives the
harness ``ROLLOUTGYM_MCP_URL`` (streamable HTTP on the endpoint's 127.0.0.1 server); each tool call
it makes with the official ``mcp`` client is one env step the engine records, its printed answer the
last step. The harness scripts below are real subprocesses."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from rolloutgym import arollout, get_registry, make_policy, rollout
from rolloutgym_harness import harness_trajectory
from rolloutgym_harness.harness import make_policy as make_harness
from rolloutgym_protocol.errors import ConfigError

ENV = "workflow/refund-v2"

# Calls the tools listed in a JSON file (name, arguments) over MCP, prints what they answered to
# stderr and the final answer on stdout.
AGENT = """
import asyncio, json, os, sys
import openai
from mcp import Client

def think(prompt):  # a model call through the endpoint (recorded with exact tokens)
    messages = [{"role": "user", "content": prompt}]
    openai.OpenAI(max_retries=0).chat.completions.create(model="m", messages=messages, max_tokens=4)

async def main():
    plan = json.load(open(sys.argv[1]))
    if plan.get("think"):
        think("plan the refund")
    async with Client(sys.argv[2]) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        print("TOOLS", json.dumps(tools), file=sys.stderr)
        for name, arguments in plan["calls"]:
            result = await client.call_tool(name, arguments)
            print("RESULT", json.dumps(result.content[0].text), file=sys.stderr)
    assert sys.argv[2] == os.environ["ROLLOUTGYM_MCP_URL"]
    if plan.get("think"):
        think("write the answer")
    print(plan["answer"])

asyncio.run(main())
"""


def _oracle_plan(env_id: str = ENV) -> dict:
    trajectory = rollout(get_registry().make(env_id, task=0), make_policy("oracle"))
    calls = [
        (call["name"], call["arguments"]) for step in trajectory.steps for call in step.action.get("tool_calls", ())
    ]
    assert calls and trajectory.steps[-1].reward == 1.0
    return {"calls": calls, "answer": trajectory.steps[-1].action.get("content", "")}


def _episode(tmp_path: Path, plan: dict, env_id: str = ENV, **options: object):
    agent, plan_file = tmp_path / "agent.py", tmp_path / "plan.json"
    agent.write_text(AGENT)
    plan_file.write_text(json.dumps(plan))
    command = f"{sys.executable} {agent} {plan_file} {{mcp_url}}"
    policy = make_harness("command", command=command, model="hf:tiny", wall_limit=60, **options)
    return asyncio.run(arollout(get_registry().make(env_id, task=0), policy))


def test_oracle_calls_over_mcp_score_and_are_the_recorded_steps(tmp_path: Path) -> None:
    plan = {**_oracle_plan(), "think": True}
    trajectory = _episode(tmp_path, plan)
    steps = trajectory.steps
    assert sum(step.reward for step in steps) == 1.0 and trajectory.terminated
    assert len(steps) == len(plan["calls"]) + 1
    for step, (name, arguments) in zip(steps, plan["calls"], strict=False):
        (call,) = step.action["tool_calls"]
        assert (call["name"], call["arguments"]) == (name, arguments)
        assert step.policy_info["harness"]["mcp_call"] == name
    last = steps[-1]
    assert last.action == {"role": "assistant", "content": plan["answer"]}
    record = last.policy_info["harness"]
    assert record["stop_reason"] == "done" and record["returncode"] == 0
    stderr = record["stderr_tail"]
    assert '"issue_refund"' in stderr and "rolloutgym_episode" in stderr  # the env's tools were listed
    assert '\\"ok\\": true' in stderr  # the env's answers came back over MCP
    # the two model calls: the first before the first tool call, the second before the answer
    assert len(steps[0].policy_info["harness"]["calls"]) == len(record["calls"]) == 1
    calls = harness_trajectory(trajectory)
    assert calls.metadata["calls"] == 2 and calls.steps[-1].reward == 1.0
    assert all(len(step.policy_tokens) == 4 and step.observation_tokens for step in calls.steps)


def test_a_code_env_graded_through_its_tools_over_mcp(tmp_path: Path) -> None:
    """code/pybugs-v0: the harness edits the workspace with the env's own tools (apply_patch,
    submit), so the env grades the edit; submit ends the episode."""
    plan = _oracle_plan("code/pybugs-v0")
    trajectory = _episode(tmp_path, plan, "code/pybugs-v0")
    names = [step.action["tool_calls"][0]["name"] for step in trajectory.steps]
    assert names == [name for name, _ in plan["calls"]] == ["apply_patch", "submit"]
    assert trajectory.steps[-1].reward == 1.0 and trajectory.terminated


def test_a_harness_that_calls_nothing_scores_zero(tmp_path: Path) -> None:
    trajectory = _episode(tmp_path, {"calls": [], "answer": "I refunded the order."})
    assert len(trajectory.steps) == 1 and trajectory.steps[0].reward == 0.0


def test_unknown_tool_and_bad_arguments_come_back_as_the_envs_error(tmp_path: Path) -> None:
    plan = {"calls": [["no_such_tool", {}], ["get_order", {"bogus": 1}]], "answer": "done"}
    trajectory = _episode(tmp_path, plan)
    assert len(trajectory.steps) == 3 and trajectory.steps[-1].policy_info["harness"]["stop_reason"] == "done"
    stderr = trajectory.steps[-1].policy_info["harness"]["stderr_tail"]
    assert "error: unknown tool 'no_such_tool'" in stderr
    assert "error: get_order: missing argument 'order_id'" in stderr
    assert sum(step.reward for step in trajectory.steps) == 0.0


def test_mcp_option_is_checked() -> None:
    with pytest.raises(ConfigError, match="mcp must be true, false or auto"):
        make_harness("command", command="agent", model="hf:tiny", mcp="sometimes")
    policy = make_harness("command", command="agent {mcp_url}", model="hf:tiny", mcp=True)
    with pytest.raises(ConfigError, match="has no tools to serve over MCP"):
        policy.for_env(get_registry().make("toy/arith-v0", task=0))


SUBMITTER = """
import asyncio, os, sys, time
from mcp import Client

async def main():
    open(sys.argv[1], "w").write(str(os.getpid()))
    async with Client(os.environ["ROLLOUTGYM_MCP_URL"]) as client:
        await client.call_tool("submit_answer", {"sql": sys.argv[2]})
        await client.call_tool("describe_schema", {})  # the episode is over: never answered
    time.sleep(60)

asyncio.run(main())
"""


def test_env_ending_on_a_tool_call_ends_the_episode_and_the_harness(tmp_path: Path) -> None:
    oracle = rollout(get_registry().make("sql/shop-v0", task=0), make_policy("oracle"))
    (call,) = oracle.steps[-1].action["tool_calls"]
    agent, pid_file = tmp_path / "agent.py", tmp_path / "pid"
    agent.write_text(SUBMITTER)
    command = f"{sys.executable} {agent} {pid_file} {shlex.quote(call['arguments']['sql'])}"
    policy = make_harness("command", command=command, model="hf:tiny", wall_limit=60)
    # the sync engine: the harness lives on the episode's own event loop thread
    trajectory = rollout(get_registry().make("sql/shop-v0", task=0), policy)
    assert [step.reward for step in trajectory.steps] == [1.0] and trajectory.terminated
    assert trajectory.steps[0].action["tool_calls"][0]["name"] == "submit_answer"
    pid = int(pid_file.read_text())
    del policy, trajectory
    gc.collect()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid), "the harness outlived its episode"


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        waited = 0
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return waited == 0 and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
