"""The rollout graph: calls linked by token prefix into lineages (a main conversation, a title
generator, a compaction, a retry), one training row per lineage path with exact tokens, capture
validation that keeps flagged calls out of the trainable tokens, and the episode limits (tokens,
wall) that end a harness with its partial calls kept and its processes gone."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import openai
import pytest
from rolloutgym import arollout, get_registry
from rolloutgym.llm import CharRenderer, ScriptedSampler, TokenPolicy
from rolloutgym_harness import InterceptionEndpoint, capture_problems, harness_rows, lineage_rows, link_calls
from rolloutgym_harness.harness import make_policy
from rolloutgym_harness.recording import CallRecord

RENDERER = CharRenderer()


@pytest.fixture()
def endpoint():
    sampler = ScriptedSampler(RENDERER.encode, lambda prompt, index: f"reply {index}", end_token_id=CharRenderer.END)
    with InterceptionEndpoint(TokenPolicy(sampler, RENDERER, max_tokens=50, name="scripted")) as served:
        yield served


def _ask(client: openai.OpenAI, messages: list[dict]) -> dict:
    reply = client.chat.completions.create(model="m", messages=messages)
    return {"role": "assistant", "content": reply.choices[0].message.content}


def test_calls_link_into_lineages_and_rows(endpoint: InterceptionEndpoint) -> None:
    client = openai.OpenAI(base_url=endpoint.openai_base_url, api_key="k", max_retries=0)
    main = [{"role": "user", "content": "fix the bug"}]
    main.append(_ask(client, main))  # 0: A
    _ask(client, [{"role": "user", "content": "a title for: fix the bug"}])  # 1: title generator
    retry_base = list(main)
    main += [{"role": "user", "content": "tests fail"}]
    main.append(_ask(client, main))  # 2: B continues A
    _ask(client, [*retry_base, {"role": "user", "content": "tests fail"}])  # 3: a retry of B (child of A)
    main += [{"role": "user", "content": "now?"}]
    _ask(client, main)  # 4: C continues B
    summary = [{"role": "user", "content": "summary: fixed the bug, tests fail"}]
    summary.append(_ask(client, summary))  # 5: compaction starts a lineage
    _ask(client, [*summary, {"role": "user", "content": "go on"}])  # 6: continues the compaction
    calls = endpoint.session().calls
    assert link_calls(calls) == [None, None, 0, 0, 2, None, 5]
    rows = lineage_rows(calls, reward=1.0)
    assert [row.calls for row in rows] == [[1], [0, 3], [0, 2, 4], [5, 6]]
    assert [row.lineage for row in rows] == [1, 0, 0, 2]
    for row in rows:
        last = calls[row.calls[-1]]
        assert row.input_ids == last.prompt_token_ids + last.completion_token_ids
        sampled = [token for token, mask in zip(row.input_ids, row.loss_mask, strict=True) if mask]
        assert sampled == [token for index in row.calls for token in calls[index].completion_token_ids]
        assert sum(row.logprobs) == pytest.approx(-0.5 * len(sampled)) and row.reward == 1.0
    records = endpoint.records()
    assert [row.calls for row in harness_rows(records)] == [row.calls for row in rows]


def _record(index: int, prompt: list[int] | None, completion: list[int] | None, **extra: object) -> CallRecord:
    fields = {
        "index": index,
        "api": "chat.completions",
        "session": "s",
        "messages": [],
        "tools": [],
        "requested": {},
        "params": {},
        "prompt_token_ids": prompt,
        "completion_token_ids": completion,
        "logprobs": None if completion is None else [-1.0] * len(completion),
        "stop_reason": "stop",
        "text": "",
        "tool_calls": [],
        "segment": 0,
        "new_segment": False,
        "extends": True,
        "seconds": 0.0,
    }
    return CallRecord(**{**fields, **extra})


def test_capture_validation_flags_and_masks() -> None:
    good = _record(0, [1, 2], [3, 4])
    cut = _record(1, [1, 2, 3, 4, 5], [6, 7], stop_reason="length", problems=["tool call withheld (cut by ...)"])
    missing = _record(2, [9], None)
    unended = _record(3, [8], [1], stop_reason="")
    short = _record(4, [7], [1, 2], logprobs=[-1.0])
    assert capture_problems(good) == []
    assert "withheld" in capture_problems(cut)[0]
    assert capture_problems(missing) == ["completion token ids missing"]
    assert "did not end" in capture_problems(unended)[0]
    assert "one per completion token" in capture_problems(short)[0]
    (row, *others) = lineage_rows([good, cut, missing, unended, short])
    assert row.calls == [0, 1] and row.flagged == [1]
    assert row.loss_mask == [0, 0, 1, 1, 0, 0, 0]  # the flagged call's tokens are not trainable
    assert all(row.calls != [2] for row in others)  # a call without ids makes no row


AGENT = """
import sys, openai
client = openai.OpenAI(max_retries=0)
main = [{"role": "user", "content": "task"}]
for turn in range(int(sys.argv[1])):
    try:
        reply = client.chat.completions.create(model="m", messages=main, max_tokens=5)
    except openai.APIStatusError as exc:
        print("refused", exc.status_code)
        break
    main += [reply.choices[0].message.model_dump(exclude_none=True), {"role": "user", "content": "more"}]
    if turn == 0:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "title?"}], max_tokens=5)
else:
    print("done")
"""


def _episode(tmp_path: Path, turns: int, **options: object):
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    policy = make_policy("command", command=f"{sys.executable} {agent} {turns}", model="hf:tiny", **options)
    return asyncio.run(arollout(get_registry().make("toy/arith-v0", task=0), policy))


def test_the_run_record_says_which_call_belongs_to_which_lineage(tmp_path: Path) -> None:
    trajectory = _episode(tmp_path, 3, force={"max_tokens": 5})
    record = trajectory.steps[0].policy_info["harness"]
    assert [call["lineage"] for call in record["calls"]] == [0, 1, 0, 0]
    assert [call["parent"] for call in record["calls"]] == [None, None, 0, 2]
    assert record["graph"] == {"lineages": 2, "flagged_calls": 0, "flagged": {}}
    rows = harness_rows(trajectory)
    assert [row.calls for row in rows] == [[1], [0, 2, 3]]


def test_token_limit_ends_the_episode_with_partial_calls(tmp_path: Path) -> None:
    trajectory = _episode(tmp_path, 10, force={"max_tokens": 5}, max_completion_tokens=12)
    step = trajectory.steps[0]
    record = step.policy_info["harness"]
    assert step.policy_stop_reason == "token_limit" and record["stop_reason"] == "token_limit"
    assert len(record["calls"]) == 3  # 5 + 5 + 5 tokens: the third passed 12, the fourth was refused
    assert all(call["completion_token_ids"] for call in record["calls"])


def test_a_hanging_harness_is_killed_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time; child = subprocess.Popen(['sleep', '300']); "
        f"open({str(pid_file)!r}, 'w').write(str(child.pid)); time.sleep(300)"
    )
    trajectory = asyncio.run(
        arollout(
            get_registry().make("toy/arith-v0", task=0),
            make_policy("command", command=f'{sys.executable} -c "{script}"', model="hf:tiny", wall_limit=2),
        )
    )
    assert trajectory.steps[0].policy_stop_reason == "wall_limit"
    pid = int(pid_file.read_text())
    for _ in range(200):  # the kill is immediate; this waits only for the process to be reaped
        if not _alive(pid):
            break
        asyncio.run(asyncio.sleep(0.05))
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_rows_come_back_from_a_run_file(tmp_path: Path) -> None:
    from rolloutgym.cli import main
    from rolloutgym.runs import read_run

    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    out = tmp_path / "run.jsonl"
    command = f"{sys.executable} {agent} 2"
    arguments = ["run", "toy/arith-v0", "--policy", "harness:command", "--policy-arg", f"command={command}"]
    arguments += ["--policy-arg", "model=hf:tiny", "--policy-arg", 'force={"max_tokens": 5}', "--limit", "1"]
    assert main([*arguments, "--out", str(out)]) == 0
    (trajectory,) = read_run(out).groups[0].trajectories
    rows = harness_rows(trajectory)
    assert [row.calls for row in rows] == [[1], [0, 2]] and all(row.flagged == [] for row in rows)
    assert [call["lineage"] for call in trajectory.steps[0].policy_info["harness"]["calls"]] == [0, 1, 0]
