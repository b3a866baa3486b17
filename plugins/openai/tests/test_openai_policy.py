"""The ``openai`` policy against a REAL HTTP server on 127.0.0.1.

Every test starts ``ChatCompletionsServer`` (stdlib ``http.server`` in a thread, an
ephemeral port) with scripted replies: tool calls, 429/500 errors, hangs, broken bodies.
No mocks of our own code, no network beyond the loopback, no API key.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from rolloutgym.registry import get_registry
from rolloutgym.rollouts import arollout, arollout_group, rollout
from rolloutgym_openai import OpenAIChatPolicy, make_policy
from rolloutgym_openai.testing import ChatCompletionsServer, Reply
from rolloutgym_protocol import Trajectory
from rolloutgym_protocol.errors import ConfigError, PolicyError


def guess(number: Any, call_id: str = "c1") -> Reply:
    return Reply(content="", tool_calls=({"id": call_id, "name": "guess", "arguments": number},))


def play(env_id: str, policy: Any, task: int = 0, max_steps: int = 8) -> Trajectory:
    async def go() -> Trajectory:
        environment = get_registry().make(env_id, task=task)
        try:
            return await arollout(environment, policy, seed=0, max_steps=max_steps)
        finally:
            environment.close()

    return asyncio.run(go())


def quick(server: ChatCompletionsServer, **options: Any) -> OpenAIChatPolicy:
    options.setdefault("timeout", 10)
    return make_policy("test-model", base_url=server.url, **options)


def target_of(task: int = 0) -> int:
    return get_registry().make("toy/guess-v0", task=task).task.target


def test_tool_calls_drive_the_env_and_history_goes_over_the_wire() -> None:
    target = target_of()
    script = [guess({"number": target + 1}, "c1"), guess({"number": target}, "c2")]
    with ChatCompletionsServer(script) as server:
        trajectory = play("toy/guess-v0", quick(server))
    assert trajectory.terminated and trajectory.total_reward == 1.0
    assert [step.action["tool_calls"][0]["arguments"] for step in trajectory.steps] == [
        {"number": target + 1},
        {"number": target},
    ]
    first, second = server.requests
    assert first["tools"][0]["function"]["name"] == "guess"
    assert [message["role"] for message in first["messages"]] == ["system", "user"]
    # The second request carries the assistant's tool call (wire shape) and the tool result.
    assistant, tool = second["messages"][2], second["messages"][3]
    assert assistant["tool_calls"][0]["function"] == {"name": "guess", "arguments": json.dumps({"number": target + 1})}
    assert tool == {"role": "tool", "tool_call_id": "c1", "content": "lower"}


def test_usage_is_summed_per_trajectory() -> None:
    target = target_of()
    with ChatCompletionsServer([guess({"number": target + 1}), guess({"number": target})]) as server:
        trajectory = play("toy/guess-v0", quick(server))
    per_call = [step.policy_info["usage"] for step in trajectory.steps]
    final = trajectory.steps[-1].policy_info["usage_total"]
    assert final["completion_tokens"] == sum(usage["completion_tokens"] for usage in per_call)
    assert final["prompt_tokens"] == sum(usage["prompt_tokens"] for usage in per_call) > 0


def test_retries_429_and_500_then_succeeds() -> None:
    script = [
        Reply(status=429, headers={"retry-after-ms": "10"}),
        Reply(status=500, headers={"retry-after": "0"}),
        Reply(content="7"),
    ]
    with ChatCompletionsServer(script) as server:
        trajectory = play("toy/arith-v0", quick(server))
        assert len(server.requests) == 3
    assert trajectory.steps[0].action == "7"


def test_gives_up_after_max_retries_with_a_clear_error() -> None:
    script = [Reply(status=503, headers={"retry-after-ms": "1"})] * 3
    with ChatCompletionsServer(script) as server:
        with pytest.raises(PolicyError, match=r"failed after 3 attempt\(s\): HTTP 503"):
            play("toy/arith-v0", quick(server, max_retries=2))
        assert len(server.requests) == 3


def test_a_refused_key_is_not_retried_and_says_what_to_do() -> None:
    with ChatCompletionsServer([Reply(status=401)]) as server:
        with pytest.raises(PolicyError, match="OPENAI_API_KEY"):
            play("toy/arith-v0", quick(server, max_retries=3))
        assert len(server.requests) == 1


def test_timeout_is_retried_then_reported() -> None:
    script = [Reply(content="1", delay=1.0), Reply(content="1", delay=1.0)]
    with ChatCompletionsServer(script) as server:
        policy = quick(server, timeout=0.2, max_retries=1)
        with pytest.raises(PolicyError, match="no answer within the 0.2 s timeout"):
            play("toy/arith-v0", policy)


def test_unreachable_server_is_a_policy_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    policy = make_policy("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, timeout=2)
    with pytest.raises(PolicyError, match=rf"127.0.0.1:{port}/v1 failed after 2 attempt\(s\): connection failed"):
        play("toy/arith-v0", policy)


def test_openai_without_a_key_fails_at_creation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(PolicyError, match="set OPENAI_API_KEY"):
        get_registry().make_policy("openai:gpt-4o-mini")


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown option"):
        make_policy("m", base_url="http://127.0.0.1:1/v1", temprature=0.5)
    with pytest.raises(ConfigError, match="not an http"):
        make_policy("m", base_url="127.0.0.1:8000")


def test_a_server_that_refuses_logprobs_is_not_asked_again() -> None:
    refusal = Reply(status=400, raw_body=json.dumps({"error": {"message": "logprobs are not supported"}}).encode())
    with ChatCompletionsServer([refusal, Reply(content="3"), Reply(content="4")]) as server:
        policy = quick(server)
        play("toy/arith-v0", policy)
        play("toy/arith-v0", policy)
        assert ["logprobs" in request for request in server.requests] == [True, False, False]


def test_logprobs_are_recorded_when_offered() -> None:
    with ChatCompletionsServer([Reply(content="the answer is 12")]) as server:
        trajectory = play("toy/arith-v0", quick(server))
    assert trajectory.steps[0].policy_logprobs == (-0.25, -0.5, -0.75, -1.0)


def test_vllm_token_ids_are_recorded_verbatim() -> None:
    script = [Reply(content="12", token_ids=(17, 18, 2))]
    with ChatCompletionsServer(script) as server:
        trajectory = play("toy/arith-v0", quick(server, return_token_ids=True))
        assert server.requests[0]["return_token_ids"] is True
    step = trajectory.steps[0]
    assert step.policy_tokens == (17, 18, 2)
    assert len(step.policy_logprobs) == 3
    assert step.observation_tokens  # the prompt ids the server reported


def test_token_id_strings_in_logprobs_become_tokens() -> None:
    script = [Reply(content="12", token_ids=(5, 6))]
    with ChatCompletionsServer(script) as server:
        trajectory = play("toy/arith-v0", quick(server, extra_body={"return_tokens_as_token_ids": True}))
    assert trajectory.steps[0].policy_tokens == (5, 6)


def test_malformed_tool_arguments_become_an_invalid_action_not_a_crash() -> None:
    target = target_of()
    with ChatCompletionsServer([guess("{not json"), guess({"number": target})]) as server:
        trajectory = play("toy/guess-v0", quick(server))
    first = trajectory.steps[0]
    assert first.policy_info["invalid_action"] is True
    assert first.next_observation[0]["content"].startswith("error:")
    assert trajectory.total_reward == 1.0


def test_a_broken_body_is_a_policy_error() -> None:
    with ChatCompletionsServer([Reply(raw_body=b"<html>gateway</html>")]) as server:
        with pytest.raises(PolicyError, match="not JSON"):
            play("toy/arith-v0", quick(server))


def test_concurrency_limit_bounds_requests_in_flight() -> None:
    with ChatCompletionsServer(latency=0.05) as server:
        policy = quick(server, max_concurrency=2)
        group = asyncio.run(
            arollout_group(
                0, lambda task: get_registry().make("toy/arith-v0", task=task), policy, num_rollouts=6, concurrency=6
            )
        )
        assert not group.errors
        assert server.max_in_flight == 2
        assert len(server.requests) == 6


def test_sync_rollout_works_step_after_step() -> None:
    # Each sync step runs in its own event loop: the client must not leak across loops.
    target = target_of()
    with ChatCompletionsServer([guess({"number": target - 1}), guess({"number": target})]) as server:
        environment = get_registry().make("toy/guess-v0", task=0)
        trajectory = rollout(environment, quick(server), seed=0, max_steps=4)
        environment.close()
    assert trajectory.total_reward == 1.0
