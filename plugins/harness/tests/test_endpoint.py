"""The interception endpoint against the official ``openai`` and ``anthropic`` Python clients.

A real uvicorn server on 127.0.0.1 (a free port) answers with hf:tiny (a random local model);
no network and no API key are used.
"""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest
from rolloutgym.llm import check_provenance, trajectory_tokens
from rolloutgym_harness import InterceptionEndpoint, check_rerender


@pytest.fixture(scope="module")
def endpoint() -> Iterator[InterceptionEndpoint]:
    with InterceptionEndpoint("hf:tiny", force={"max_tokens": 6}) as served:
        yield served


@pytest.fixture()
def client(endpoint: InterceptionEndpoint) -> openai.OpenAI:
    return openai.OpenAI(base_url=endpoint.openai_base_url, api_key="local", max_retries=0)


def _session_calls(endpoint: InterceptionEndpoint, name: str) -> list:
    return endpoint.session(name).calls


def test_chat_completions_records_exact_tokens_and_stitches(endpoint: InterceptionEndpoint) -> None:
    client = openai.OpenAI(base_url=f"{endpoint.session_url('chat')}/v1", api_key="local", max_retries=0)
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    first = client.chat.completions.create(model="m", messages=messages, logprobs=True, max_tokens=50)
    assert first.choices[0].finish_reason == "length"  # forced max_tokens=6 wins over 50
    assert first.usage.completion_tokens == 6
    assert len(first.choices[0].logprobs.content) == 6
    messages += [first.choices[0].message.model_dump(exclude_none=True), {"role": "user", "content": "and?"}]
    client.chat.completions.create(model="m", messages=messages)
    calls = _session_calls(endpoint, "chat")
    assert [call.requested.get("max_tokens") for call in calls] == [50, None]
    assert [call.params["max_tokens"] for call in calls] == [6, 6]
    assert len(calls[0].completion_token_ids) == len(calls[0].logprobs) == 6
    # The echoed history continues the recorded tokens verbatim: one segment.
    assert calls[1].extends and not calls[1].new_segment
    assert (
        calls[1].prompt_token_ids[: len(calls[0].prompt_token_ids) + 6]
        == calls[0].prompt_token_ids + calls[0].completion_token_ids
    )
    trajectory = endpoint.session("chat").trajectory(reward=1.0)
    assert trajectory.metadata["segments"] == 1
    assert check_provenance(trajectory) == 0
    tokens = trajectory_tokens(trajectory)
    assert tokens.input_ids == tuple(calls[1].prompt_token_ids + calls[1].completion_token_ids)
    assert sum(tokens.loss_mask) == 12
    assert trajectory.steps[-1].reward == 1.0
    assert check_rerender(endpoint.policy.renderer, calls) == []


def test_rewritten_history_is_a_new_segment(endpoint: InterceptionEndpoint) -> None:
    client = openai.OpenAI(base_url=f"{endpoint.session_url('rewrite')}/v1", api_key="local", max_retries=0)
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "long task text"}])
    summary = [{"role": "user", "content": "summary of earlier work"}, {"role": "user", "content": "go on"}]
    client.chat.completions.create(model="m", messages=summary)
    calls = _session_calls(endpoint, "rewrite")
    assert calls[1].new_segment and calls[1].segment == 1
    trajectory = endpoint.session("rewrite").trajectory()
    assert trajectory.metadata["segments"] == 2
    assert trajectory.steps[1].policy_info["retokenization_mismatch"] is True
    assert trajectory.steps[1].observation_tokens == tuple(calls[1].prompt_token_ids)


def test_streaming_chat_tools_and_models(client: openai.OpenAI, endpoint: InterceptionEndpoint) -> None:
    tools = [{"type": "function", "function": {"name": "run", "parameters": {"type": "object"}}}]
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "stream please"}], stream=True, tools=tools
    )
    chunks = list(stream)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert chunks[-1].choices[0].finish_reason == "length"
    recorded = endpoint.session().calls[-1]
    assert text.strip() and text.strip() in recorded.text
    assert recorded.tools[0]["function"]["name"] == "run"
    assert [model.id for model in client.models.list()] == ["hf:tiny"]


def test_responses_api(client: openai.OpenAI, endpoint: InterceptionEndpoint) -> None:
    response = client.responses.create(model="m", instructions="short", input="hello", max_output_tokens=3)
    assert response.status == "incomplete"
    call = endpoint.session().calls[-1]
    assert call.api == "responses" and call.messages[0] == {"role": "system", "content": "short"}
    assert call.params["max_tokens"] == 6 and len(call.completion_token_ids) == 6
    assert response.usage.output_tokens == 6


def test_anthropic_messages_plain_and_streamed(endpoint: InterceptionEndpoint) -> None:
    client = anthropic.Anthropic(base_url=endpoint.session_url("claude"), api_key="local", max_retries=0)
    message = client.messages.create(
        model="m", max_tokens=20, system="sys", messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    )
    assert message.stop_reason == "max_tokens" and message.usage.output_tokens == 6
    with client.messages.stream(model="m", max_tokens=20, messages=[{"role": "user", "content": "hi"}]) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "max_tokens"
    calls = _session_calls(endpoint, "claude")
    assert [call.api for call in calls] == ["messages", "messages"]
    assert calls[0].messages[0] == {"role": "system", "content": "sys"}
    assert calls[1].new_segment  # a fresh conversation in the same session


def test_bad_request_is_a_clear_error(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="messages"):
        client.chat.completions.create(model="m", messages=[])


def test_max_calls_refuses_and_sets_the_stop_reason() -> None:
    with InterceptionEndpoint("hf:tiny", force={"max_tokens": 2}, max_calls=1) as served:
        client = openai.OpenAI(base_url=served.openai_base_url, api_key="local", max_retries=0)
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
        with pytest.raises(openai.RateLimitError, match="max_calls"):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "b"}])
        assert served.session().stop_reason == "max_calls"
        assert served.session().trajectory().stop_reason == "max_calls"
