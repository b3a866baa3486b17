"""The endpoint forwarding to an ``openai:`` server: a real OpenAI-compatible server on 127.0.0.1
(rolloutgym-openai's scripted ``ChatCompletionsServer``) answers; a ``harness:command`` episode whose
harness (the official ``openai`` client, in a subprocess) calls the endpoint plainly and streamed.
The run file records each call at text level (messages, reply, the server's logprobs and usage; no
token ids when the server gives none), and with vLLM-style ``return_token_ids`` the server's token ids."""

from __future__ import annotations

import sys
from pathlib import Path

import openai
from rolloutgym.cli import main
from rolloutgym.runs import read_run
from rolloutgym_harness import InterceptionEndpoint, harness_trajectory
from rolloutgym_openai.testing import ChatCompletionsServer, Reply

AGENT = """
import sys, openai
client = openai.OpenAI(max_retries=0)
messages = [{"role": "user", "content": open(sys.argv[1]).read()}]
first = client.chat.completions.create(model="m", messages=messages, max_tokens=7, logprobs=True)
messages += [first.choices[0].message.model_dump(exclude_none=True), {"role": "user", "content": "sure?"}]
stream = client.chat.completions.create(model="m", messages=messages, stream=True)
print("".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices))
"""


def test_harness_episode_forwarded_to_an_openai_server(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    out = tmp_path / "run.jsonl"
    with ChatCompletionsServer([Reply(content="let me think"), Reply(content="64")], model="up") as server:
        args = ["run", "toy/arith-v0", "--policy", "harness:command", "--limit", "1", "--out", str(out)]
        args += ["--policy-arg", f"command={sys.executable} {agent} {{instruction_file}}"]
        args += ["--policy-arg", "model=openai:up", "--base-url", server.url]
        assert main(args) == 0
    step = read_run(out).groups[0].trajectories[0].steps[0]
    record = step.policy_info["harness"]
    assert record["stop_reason"] == "done" and step.action == "64", record["stderr_tail"]
    first, second = record["calls"]
    # What went upstream: the harness's messages, its max_tokens, the openai: model name.
    sent = server.requests
    assert [body["model"] for body in sent] == ["up", "up"] and sent[0]["max_tokens"] == 7
    assert sent[1]["messages"][1] == {"role": "assistant", "content": "let me think"}
    assert sent[1]["messages"][2] == {"role": "user", "content": "sure?"}
    # Text level: the reply, the server's logprobs (one per piece it reported) and usage; no token ids.
    assert [first["text"], second["text"]] == ["let me think", "64"]
    assert first["prompt_token_ids"] is None and first["completion_token_ids"] is None
    assert first["logprobs"] == [-0.25, -0.5, -0.75] and second["logprobs"] == [-0.25]
    assert first["upstream"]["usage"]["completion_tokens"] == 3 and first["upstream"]["server_model"] == "up"
    assert first["requested"] == {"max_tokens": 7} and second["params"]["max_tokens"] == 1024
    # The harness sent back the history it was given: one segment, the second call extends the first.
    assert second["extends"] and not second["new_segment"] and record["segments"] == 1
    trajectory = harness_trajectory(step)
    assert len(trajectory.steps) == 2 and trajectory.steps[1].policy_tokens is None


def test_forwarded_token_ids_are_recorded_and_compared() -> None:
    """A server that returns token ids (vLLM's return_token_ids): the record holds them, and a prompt
    that does not extend the previous prompt + completion token for token starts a new segment."""
    from rolloutgym import make_policy

    script = [Reply(content="a b", token_ids=(11, 12)), Reply(content="c", token_ids=(13,))]
    with ChatCompletionsServer(script) as server:
        policy = make_policy("openai:m", base_url=server.url, return_token_ids=True, max_retries=0)
        with InterceptionEndpoint(policy, force={"max_tokens": 5}) as endpoint:
            client = openai.OpenAI(base_url=endpoint.openai_base_url, api_key="local", max_retries=0)
            messages = [{"role": "user", "content": "q"}]
            reply = client.chat.completions.create(model="x", messages=messages)
            messages += [reply.choices[0].message.model_dump(exclude_none=True), {"role": "user", "content": "more"}]
            client.chat.completions.create(model="x", messages=messages, stream=True).close()
    assert server.requests[0]["return_token_ids"] is True and server.requests[0]["max_tokens"] == 5
    first, second = endpoint.session().calls
    assert first.completion_token_ids == [11, 12] and first.logprobs == [-0.25, -0.5]
    assert first.prompt_token_ids == [1, 2, 3, 4, 5]  # the scripted server numbers the prompt's tokens 1..n
    assert second.completion_token_ids == [13]
    # Its prompt ids are 1..16, which do not continue [1..5, 11, 12]: a new segment, counted.
    assert second.new_segment and not second.extends and endpoint.session().segments == 2
    assert endpoint.session().trajectory().metadata["segments"] == 2
