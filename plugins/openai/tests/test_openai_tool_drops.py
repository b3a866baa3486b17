"""Tools a server silently drops (issue 32), against a REAL local server speaking llama.cpp's wire format.

llama.cpp's server answers a request that offers tools but sends no ``tool_choice`` with plain
text (one turn, reward 0, no warning was the newcomer's experience). Its answers carry a
``timings`` object and a ``b<build>`` system fingerprint; the adapter knows it by that shape,
asks again with ``tool_choice="auto"`` and says so. A reply that writes a tool call as text
(a server that does not parse tool calls for the model) is named at once, on any server.
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
from rolloutgym_openai.testing import ChatCompletionsServer, Reply, default_reply


def run_episode(policy: Any, env_id: str = "toy/guess-v0", max_steps: int = 6) -> Any:
    async def go() -> Any:
        environment = get_registry().make(env_id, task=0)
        try:
            return await arollout(environment, policy, seed=0, max_steps=max_steps)
        finally:
            environment.close()

    return asyncio.run(go())


def _text_answer(text: str, **shape: Any) -> Reply:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-3.5-turbo",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35},
        **shape,
    }
    return Reply(raw_body=json.dumps(body).encode())


LLAMA_TIMINGS = {"timings": {"prompt_n": 30, "prompt_ms": 4.1, "predicted_n": 5, "predicted_ms": 2.0}}
LLAMA_FINGERPRINT = {"system_fingerprint": "b5123-8a1f4c2"}


def llama_cpp(shape: dict[str, Any]) -> Any:
    """Like llama.cpp: offered tools without tool_choice get plain text; with it, a tool call."""

    def respond(request: dict[str, Any]) -> Reply:
        if request.get("tools") and request.get("tool_choice") is None:
            return _text_answer("I guess the number is 5.", **shape)
        return default_reply(request)

    return respond


def _warnings(caplog: pytest.LogCaptureFixture, words: str) -> list[str]:
    return [record.getMessage() for record in caplog.records if words in record.getMessage()]


@pytest.mark.parametrize("shape", [LLAMA_TIMINGS, LLAMA_FINGERPRINT], ids=["timings", "fingerprint"])
def test_a_llama_cpp_server_that_drops_tools_is_asked_again_with_tool_choice_auto(
    shape: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with ChatCompletionsServer(responder=llama_cpp(shape)) as server, caplog.at_level(logging.WARNING):
        policy = make_policy("m", base_url=server.url, timeout=10, logprobs=False)
        trajectory = run_episode(policy)
        url = server.url
    first, second, *rest = server.requests
    assert "tool_choice" not in first and second["tool_choice"] == "auto"
    assert all(request["tool_choice"] == "auto" for request in rest)
    assert any(step.action.get("tool_calls") for step in trajectory.steps)  # the env saw tool calls
    warnings = _warnings(caplog, "tool_choice=auto")
    assert len(warnings) == 1 and url in warnings[0] and "llama.cpp" in warnings[0]


def test_a_chosen_tool_choice_is_never_overridden(caplog: pytest.LogCaptureFixture) -> None:
    with ChatCompletionsServer(responder=lambda request: _text_answer("no", **LLAMA_TIMINGS)) as server:
        with caplog.at_level(logging.WARNING):
            run_episode(make_policy("m", base_url=server.url, timeout=10, logprobs=False, tool_choice="none"))
    assert [request["tool_choice"] for request in server.requests] == ["none"]
    assert not _warnings(caplog, "llama.cpp server")


def test_other_servers_are_not_asked_twice(caplog: pytest.LogCaptureFixture) -> None:
    with ChatCompletionsServer(responder=lambda request: _text_answer("5")) as server, caplog.at_level(logging.WARNING):
        run_episode(make_policy("m", base_url=server.url, timeout=10, logprobs=False))
    assert len(server.requests) == 1 and "tool_choice" not in server.requests[0]
    assert not _warnings(caplog, "llama.cpp server") and not _warnings(caplog, "as text")


@pytest.mark.parametrize(
    "content",
    [
        '<|tool_call_begin|>guess<|tool_call_argument_begin|>{"number": 5}<|tool_call_end|>',
        '<function=guess>{"number": 5}</function>',
        'Calling it now: {"name": "guess", "arguments": {"number": 5}}',
        '{"name": "guess", "parameters": {"number": 5}}',
        "[TOOL_CALLS] guess(number=5)",
    ],
)
def test_a_tool_call_written_as_text_is_named_on_the_first_reply(
    content: str, caplog: pytest.LogCaptureFixture
) -> None:
    with ChatCompletionsServer(responder=lambda request: _text_answer(content)) as server:
        url = server.url
        with caplog.at_level(logging.WARNING):
            run_episode(make_policy("m", base_url=url, timeout=10, logprobs=False))
    assert len(server.requests) == 1
    warnings = _warnings(caplog, "wrote a tool call as text")
    assert len(warnings) == 1 and url in warnings[0] and "--jinja" in warnings[0] and "tool_choice=auto" in warnings[0]


@pytest.mark.parametrize("content", ['{"name": "alice", "arguments": 3}', "my answer is {not json", "5"])
def test_text_that_is_no_tool_call_is_not_flagged(content: str, caplog: pytest.LogCaptureFixture) -> None:
    with (
        ChatCompletionsServer(responder=lambda request: _text_answer(content)) as server,
        caplog.at_level(logging.WARNING),
    ):
        run_episode(make_policy("m", base_url=server.url, timeout=10, logprobs=False))
    assert not _warnings(caplog, "wrote a tool call as text")


def test_hermes_blocks_in_the_text_are_calls_the_policy_reads(caplog: pytest.LogCaptureFixture) -> None:
    """``<tool_call>`` blocks are parsed by the chat policy: the env gets the calls, so no warning."""
    block = '<tool_call>\n{"name": "guess", "arguments": {"number": 5}}\n</tool_call>'
    with (
        ChatCompletionsServer(responder=lambda request: _text_answer(block)) as server,
        caplog.at_level(logging.WARNING),
    ):
        trajectory = run_episode(make_policy("m", base_url=server.url, timeout=10, logprobs=False))
    assert len(server.requests) > 4 and trajectory.steps[0].action["tool_calls"][0]["name"] == "guess"
    assert not _warnings(caplog, "as text") and not _warnings(caplog, "never called one")
