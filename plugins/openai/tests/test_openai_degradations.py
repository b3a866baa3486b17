"""Silent degradations the adapter must not hide, against a REAL local HTTP server.

``ChatCompletionsServer`` is a real OpenAI-compatible server on 127.0.0.1 (no network,
no API key); it answers with scripted replies, so a server that ignores tools or never
returns logprobs (llama-cpp-python's default chat format does both) is reproduced
over real sockets.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from rolloutgym.registry import get_registry
from rolloutgym.rollouts import arollout
from rolloutgym_openai import make_policy
from rolloutgym_openai.testing import ChatCompletionsServer, Reply
from rolloutgym_protocol.errors import ConfigError


def run_episode(env_id: str, policy: Any, task: int = 0, max_steps: int = 6) -> Any:
    async def go() -> Any:
        environment = get_registry().make(env_id, task=task)
        try:
            return await arollout(environment, policy, seed=0, max_steps=max_steps)
        finally:
            environment.close()

    return asyncio.run(go())


def test_logprobs_are_asked_with_top_logprobs() -> None:
    with ChatCompletionsServer() as server:
        policy = make_policy("m", base_url=server.url, timeout=10)
        run_episode("toy/arith-v0", policy)
        run_episode("toy/arith-v0", make_policy("m", base_url=server.url, timeout=10, top_logprobs=3))
    first, second = server.requests
    assert first["logprobs"] is True and first["top_logprobs"] == 1
    assert second["top_logprobs"] == 3


def _bare_answer(text: str) -> Reply:
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    return Reply(raw_body=json.dumps(body).encode())


def test_logprobs_never_returned_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    """A server that accepts ``logprobs`` but never returns any: one warning, not silence."""
    with ChatCompletionsServer(responder=lambda request: _bare_answer("41")) as server:
        url = server.url
        with caplog.at_level(logging.WARNING):
            policy = make_policy("m", base_url=url, timeout=10)
            for task in range(3):
                run_episode("toy/arith-v0", policy, task=task)
    assert all(request.get("logprobs") for request in server.requests)
    warnings = [record.getMessage() for record in caplog.records if "logprobs were requested" in record.getMessage()]
    assert len(warnings) == 1 and url in warnings[0]


def test_logprobs_returned_do_not_warn(caplog: pytest.LogCaptureFixture) -> None:
    with ChatCompletionsServer() as server, caplog.at_level(logging.WARNING):
        policy = make_policy("m", base_url=server.url, timeout=10)
        trajectory = run_episode("toy/arith-v0", policy)
    assert trajectory.steps[0].policy_logprobs
    assert not [record for record in caplog.records if "logprobs were requested" in record.getMessage()]


def test_tools_offered_and_never_called_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    def ignores_tools(request: dict[str, Any]) -> Reply:
        return Reply(content="I think the number is 5.")

    with ChatCompletionsServer(responder=ignores_tools) as server, caplog.at_level(logging.WARNING):
        url = server.url
        policy = make_policy("m", base_url=url, timeout=10, max_turns=1)
        for task in range(6):
            run_episode("toy/guess-v0", policy, task=task)
    assert all(request.get("tools") for request in server.requests)
    warnings = [record.getMessage() for record in caplog.records if "never called one" in record.getMessage()]
    assert len(warnings) == 1
    assert "tool_choice" in warnings[0] and url in warnings[0]


def test_no_tool_warning_when_the_server_calls_tools(caplog: pytest.LogCaptureFixture) -> None:
    with ChatCompletionsServer() as server, caplog.at_level(logging.WARNING):
        policy = make_policy("m", base_url=server.url, timeout=10, max_turns=1)
        for task in range(6):
            run_episode("toy/guess-v0", policy, task=task)
    assert not [record for record in caplog.records if "never called one" in record.getMessage()]


def test_a_retry_after_a_timeout_waits_longer_instead_of_piling_up() -> None:
    """A slow server (2.6 s per answer) behind a 2 s timeout: the retry waits up to 4 s.

    The margins (0.6 s over the first timeout, 1.4 s under the retry's) leave room for a
    loaded 2-core machine, where the local round trip itself can take a good part of a second.
    """
    script = [Reply(content="first", delay=2.6), Reply(content="41", delay=2.6)]
    with ChatCompletionsServer(script) as server:
        policy = make_policy("m", base_url=server.url, timeout=2.0, max_retries=1, max_turns=1)
        trajectory = run_episode("toy/arith-v0", policy)
    assert len(server.requests) == 2  # one timed out, one retry that was given time to finish
    assert trajectory.steps and "41" in str(trajectory.steps[0].action)


def test_top_logprobs_out_of_range_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="top_logprobs"):
        make_policy("m", base_url="http://127.0.0.1:9/v1", top_logprobs=50)
