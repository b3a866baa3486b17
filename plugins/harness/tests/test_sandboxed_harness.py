"""``sandbox=bwrap``: the harness process runs in bubblewrap (no network, its own uid and PID
namespace, the work folder the only writable host folder) and still reaches the endpoint (model
calls recorded with exact tokens) and the env's tools over MCP at the same 127.0.0.1 address."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from pathlib import Path

import pytest
from rolloutgym import arollout, get_registry, make_policy, rollout
from rolloutgym_harness.harness import make_policy as make_harness
from rolloutgym_protocol.errors import ConfigError

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)")

AGENT = """
import asyncio, json, os, socket, sys
import openai
outside = sys.argv[1]
facts = {"uid": os.getuid(), "cwd": os.getcwd()}
try:
    open(outside, "w").write("escaped")
    facts["outside"] = "written"
except OSError as exc:
    facts["outside"] = type(exc).__name__
try:
    open(os.path.join(sys.prefix, "escaped.txt"), "w").write("escaped")
    facts["prefix"] = "written"
except OSError as exc:
    facts["prefix"] = exc.strerror
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
    facts["network"] = "reached"
except OSError:
    facts["network"] = "none"
client = openai.OpenAI(max_retries=0)
reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "2+2"}], max_tokens=3)
open("note.txt", "w").write("kept")
if len(sys.argv) > 2:
    from mcp import Client
    async def main():
        async with Client(os.environ["ROLLOUTGYM_MCP_URL"]) as mcp_client:
            for name, arguments in json.load(open(sys.argv[2]))["calls"]:
                await mcp_client.call_tool(name, arguments)
    asyncio.run(main())
print(json.dumps(facts), file=sys.stderr)
print(json.load(open(sys.argv[2]))["answer"] if len(sys.argv) > 2 else "64")
"""


def _harness(tmp_path: Path, *extra: str):
    work = tmp_path / "work"
    work.mkdir()
    (work / "agent.py").write_text(AGENT)
    outside = tmp_path / "outside.txt"
    command = " ".join([sys.executable, "agent.py", str(outside), *extra])
    policy = make_harness("command", command=command, model="hf:tiny", workdir=str(work), sandbox="bwrap")
    return policy, work, outside


def _facts(step) -> dict:
    return json.loads(step.policy_info["harness"]["stderr_tail"].strip().splitlines()[-1])


def test_sandboxed_harness_reaches_the_endpoint_and_nothing_else(tmp_path: Path) -> None:
    policy, work, outside = _harness(tmp_path)
    trajectory = asyncio.run(arollout(get_registry().make("toy/arith-v0", task=0), policy))
    step = trajectory.steps[0]
    record = step.policy_info["harness"]
    assert record["stop_reason"] == "done", record["stderr_tail"]
    assert step.action == "64"
    (call,) = record["calls"]
    assert call["prompt_token_ids"] and len(call["completion_token_ids"]) == len(call["logprobs"]) == 3
    facts = _facts(step)
    assert not outside.exists()  # written, if at all, to the sandbox's own /tmp
    assert facts["prefix"] == "Read-only file system" and not Path(sys.prefix, "escaped.txt").exists()
    assert facts["network"] == "none" and facts["uid"] != 0
    assert (work / "note.txt").read_text() == "kept"  # the work folder is the writable one


def test_sandboxed_harness_acts_through_the_env_tools_over_mcp(tmp_path: Path) -> None:
    oracle = rollout(get_registry().make("workflow/refund-v2", task=0), make_policy("oracle"))
    calls = [(c["name"], c["arguments"]) for step in oracle.steps for c in step.action.get("tool_calls", ())]
    plan = tmp_path / "work" / "plan.json"
    policy, work, _ = _harness(tmp_path, "plan.json")
    plan.write_text(json.dumps({"calls": calls, "answer": oracle.steps[-1].action["content"]}))
    trajectory = asyncio.run(arollout(get_registry().make("workflow/refund-v2", task=0), policy))
    assert len(trajectory.steps) == len(calls) + 1
    assert sum(step.reward for step in trajectory.steps) == 1.0
    assert _facts(trajectory.steps[-1])["network"] == "none"


def test_wall_limit_kills_the_sandboxed_harness(tmp_path: Path) -> None:
    command = f"{sys.executable} -c 'import time; time.sleep(60)'"
    policy = make_harness("command", command=command, model="hf:tiny", sandbox="bwrap", wall_limit=1)
    started = time.monotonic()
    trajectory = asyncio.run(arollout(get_registry().make("toy/arith-v0", task=0), policy))
    assert trajectory.steps[0].policy_stop_reason == "wall_limit" and time.monotonic() - started < 20


def test_unknown_sandbox_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="sandbox must be none or bwrap"):
        make_harness("command", command="agent", model="hf:tiny", sandbox="docker")
