"""The endpoint answers what real clients send, checked with the official ``openai`` and
``anthropic`` Python clients against a real server on 127.0.0.1: a tool call cut by the length
limit (or one that does not parse) is never handed out as a call, in any wire format, streamed or
not; Responses ``previous_response_id``/``store``; ``n``; ``tool_choice``; ``response_format``;
Anthropic ``count_tokens``.

The model is a scripted token policy (:class:`~rolloutgym.llm.ScriptedSampler` over the
one-token-per-character :class:`~rolloutgym.llm.CharRenderer`): the test says what the model
"samples", every token of it recorded as a real policy's would be.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from rolloutgym.llm import CharRenderer, ScriptedSampler, TokenPolicy
from rolloutgym_harness import InterceptionEndpoint, check_rerender

RENDERER = CharRenderer()
CALL = '<tool_call>{"name": "delete_files", "arguments": {"paths": ["a.txt"]}}</tool_call>'
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "delete_files",
            "parameters": {"type": "object", "properties": {"paths": {"type": "array"}}, "required": ["paths"]},
        },
    }
]
ANTHROPIC_TOOLS = [{"name": "delete_files", "input_schema": TOOLS[0]["function"]["parameters"]}]
RESPONSES_TOOLS = [{"type": "function", "name": "delete_files", "parameters": TOOLS[0]["function"]["parameters"]}]


class Script:
    """What the scripted model says next (the same reply until changed)."""

    def __init__(self) -> None:
        self.reply = "ok"

    def __call__(self, prompt: Any, index: int) -> str:
        return self.reply


@pytest.fixture(scope="module")
def script() -> Script:
    return Script()


@pytest.fixture(scope="module")
def endpoint(script: Script) -> Iterator[InterceptionEndpoint]:
    sampler = ScriptedSampler(RENDERER.encode, script, end_token_id=CharRenderer.END)
    policy = TokenPolicy(sampler, RENDERER, max_tokens=400, max_seq_len=4000, name="scripted")
    with InterceptionEndpoint(policy) as served:
        yield served


def _openai(endpoint: InterceptionEndpoint, session: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{endpoint.session_url(session)}/v1", api_key="local", max_retries=0)


def _anthropic(endpoint: InterceptionEndpoint, session: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=endpoint.session_url(session), api_key="local", max_retries=0)


USER = [{"role": "user", "content": "clean up"}]
# cut inside the function name, inside the arguments, after the JSON but before </tool_call>
CUTS = [len('<tool_call>{"name": "dele'), len('<tool_call>{"name": "delete_files", "arguments": {"pa'), len(CALL) - 5]


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("stream", [False, True])
def test_chat_cut_tool_call_is_text_with_finish_length(
    endpoint: InterceptionEndpoint, script: Script, cut: int, stream: bool
) -> None:
    script.reply = CALL
    client = _openai(endpoint, f"chatcut{cut}{stream}")
    if stream:
        chunks = list(
            client.chat.completions.create(model="m", messages=USER, tools=TOOLS, max_tokens=cut, stream=True)
        )
        assert not any(chunk.choices[0].delta.tool_calls for chunk in chunks if chunk.choices)
        text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
        finish = chunks[-1].choices[0].finish_reason
    else:
        reply = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, max_tokens=cut)
        assert reply.choices[0].message.tool_calls is None
        text, finish = reply.choices[0].message.content, reply.choices[0].finish_reason
    assert finish == "length" and text == CALL[:cut]
    record = endpoint.session(f"chatcut{cut}{stream}").calls[-1]
    assert record.tool_calls == [] and record.problems and "withheld (cut by the length limit)" in record.problems[0]


def test_complete_call_is_handed_out_and_bad_json_is_text(endpoint: InterceptionEndpoint, script: Script) -> None:
    client = _openai(endpoint, "chatwhole")
    script.reply = CALL
    reply = client.chat.completions.create(model="m", messages=USER, tools=TOOLS)
    call = reply.choices[0].message.tool_calls[0]
    assert reply.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "delete_files" and json.loads(call.function.arguments) == {"paths": ["a.txt"]}
    script.reply = '<tool_call>{"name": "delete_files", "arguments": {"paths": [}</tool_call>'  # closed, not JSON
    reply = client.chat.completions.create(model="m", messages=USER, tools=TOOLS)
    assert reply.choices[0].message.tool_calls is None and reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.content == script.reply
    # a complete call followed by a cut one: neither is handed out
    script.reply = CALL + CALL
    reply = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, max_tokens=len(CALL) + 20)
    assert reply.choices[0].message.tool_calls is None and reply.choices[0].finish_reason == "length"


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_cut_tool_use_is_text_with_max_tokens(
    endpoint: InterceptionEndpoint, script: Script, cut: int, stream: bool
) -> None:
    script.reply = CALL
    client = _anthropic(endpoint, f"antcut{cut}{stream}")
    arguments = {"model": "m", "max_tokens": cut, "messages": USER, "tools": ANTHROPIC_TOOLS}
    if stream:
        with client.messages.stream(**arguments) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**arguments)
    assert message.stop_reason == "max_tokens"
    assert [block.type for block in message.content] == ["text"] and message.content[0].text == CALL[:cut]


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("stream", [False, True])
def test_responses_cut_function_call_is_incomplete_text(
    endpoint: InterceptionEndpoint, script: Script, cut: int, stream: bool
) -> None:
    script.reply = CALL
    client = _openai(endpoint, f"respcut{cut}{stream}")
    arguments = {"model": "m", "input": "clean up", "tools": RESPONSES_TOOLS, "max_output_tokens": cut}
    if stream:
        events = list(client.responses.create(**arguments, stream=True))
        assert events[-1].type == "response.incomplete"
        assert [event.sequence_number for event in events] == list(range(len(events)))
        response = events[-1].response
    else:
        response = client.responses.create(**arguments)
    assert response.status == "incomplete" and response.incomplete_details.reason == "max_output_tokens"
    assert [item.type for item in response.output] == ["message"]
    assert response.output_text == CALL[:cut]


def test_responses_streamed_call_events(endpoint: InterceptionEndpoint, script: Script) -> None:
    script.reply = CALL
    client = _openai(endpoint, "respstream")
    with client.responses.stream(model="m", input="clean up", tools=RESPONSES_TOOLS) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.function_call_arguments.done" in kinds
    assert final.output[0].type == "function_call" and json.loads(final.output[0].arguments) == {"paths": ["a.txt"]}


def test_previous_response_id_continues_the_conversation(endpoint: InterceptionEndpoint, script: Script) -> None:
    script.reply = "first answer"
    client = _openai(endpoint, "stateful")
    first = client.responses.create(model="m", instructions="be brief", input="hello")
    script.reply = "second answer"
    second = client.responses.create(
        model="m", instructions="be terse", input="and then?", previous_response_id=first.id
    )
    assert second.previous_response_id == first.id and second.output_text == "second answer"
    calls = endpoint.session("stateful").calls
    assert calls[1].messages == [
        {"role": "system", "content": "be terse"},  # instructions are not carried over
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "and then?"},
    ]
    assert calls[0].response_id == first.id
    # a chain of three: the second response's id names the whole conversation so far
    script.reply = "third"
    client.responses.create(model="m", input="more", previous_response_id=second.id)
    assert [m["content"] for m in calls[2].messages] == ["hello", "first answer", "and then?", "second answer", "more"]


def test_previous_response_id_refusals(endpoint: InterceptionEndpoint, script: Script) -> None:
    script.reply = "x"
    client = _openai(endpoint, "stateless")
    unstored = client.responses.create(model="m", input="hello", store=False)
    assert unstored.store is False
    with pytest.raises(openai.BadRequestError, match="store=false"):
        client.responses.create(model="m", input="next", previous_response_id=unstored.id)
    with pytest.raises(openai.BadRequestError, match="not known"):
        client.responses.create(model="m", input="next", previous_response_id="resp_made_up")
    stored = client.responses.create(model="m", input="hello")
    with pytest.raises(openai.BadRequestError, match="another session"):  # ids do not cross sessions
        _openai(endpoint, "other").responses.create(model="m", input="x", previous_response_id=stored.id)


@pytest.mark.parametrize("stream", [False, True])
def test_n_samples_each_choice_and_records_it(endpoint: InterceptionEndpoint, script: Script, stream: bool) -> None:
    script.reply = "same"
    client = _openai(endpoint, f"n{stream}")
    if stream:
        chunks = list(client.chat.completions.create(model="m", messages=USER, n=3, stream=True))
        indices = sorted({chunk.choices[0].index for chunk in chunks if chunk.choices})
        finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        assert indices == [0, 1, 2] and finishes == ["stop"] * 3
    else:
        reply = client.chat.completions.create(model="m", messages=USER, n=3)
        assert [choice.index for choice in reply.choices] == [0, 1, 2]
        assert [choice.message.content for choice in reply.choices] == ["same"] * 3
    calls = endpoint.session(f"n{stream}").calls
    assert [call.choice for call in calls] == [0, 1, 2]
    assert calls[0].prompt_token_ids == calls[1].prompt_token_ids == calls[2].prompt_token_ids


@pytest.mark.parametrize("n", [0, -1, 17, 2.5, "2", True])
def test_bad_n_is_refused(endpoint: InterceptionEndpoint, n: Any) -> None:
    with pytest.raises(openai.BadRequestError, match="n must be an integer"):
        _openai(endpoint, "badn").chat.completions.create(model="m", messages=USER, n=n)


def test_tool_choice_required_and_named_prefill_the_call(endpoint: InterceptionEndpoint, script: Script) -> None:
    client = _openai(endpoint, "required")
    script.reply = '{"name": "delete_files", "arguments": {"paths": ["b"]}}</tool_call>'
    reply = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice="required")
    assert reply.choices[0].message.tool_calls[0].function.name == "delete_files"
    record = endpoint.session("required").calls[-1]
    assert RENDERER.decode(record.prompt_token_ids).endswith("assistant\n<tool_call>\n")
    script.reply = '{"paths": ["c"]}}</tool_call>'
    named = {"type": "function", "function": {"name": "delete_files"}}
    reply = client.chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice=named)
    assert json.loads(reply.choices[0].message.tool_calls[0].function.arguments) == {"paths": ["c"]}
    message = _anthropic(endpoint, "required-a").messages.create(
        model="m",
        max_tokens=100,
        messages=USER,
        tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "tool", "name": "delete_files"},
    )
    assert message.stop_reason == "tool_use" and message.content[-1].input == {"paths": ["c"]}
    response = _openai(endpoint, "required-r").responses.create(
        model="m", input="x", tools=RESPONSES_TOOLS, tool_choice={"type": "function", "name": "delete_files"}
    )
    assert response.output[0].type == "function_call"


def test_tool_choice_none_offers_no_tools_and_hands_out_no_call(endpoint: InterceptionEndpoint, script: Script) -> None:
    script.reply = CALL
    reply = _openai(endpoint, "none").chat.completions.create(model="m", messages=USER, tools=TOOLS, tool_choice="none")
    assert reply.choices[0].message.tool_calls is None and reply.choices[0].message.content == CALL
    record = endpoint.session("none").calls[-1]
    assert "delete_files" not in RENDERER.decode(record.prompt_token_ids)
    message = _anthropic(endpoint, "none-a").messages.create(
        model="m", max_tokens=200, messages=USER, tools=ANTHROPIC_TOOLS, tool_choice={"type": "none"}
    )
    assert [block.type for block in message.content] == ["text"]


@pytest.mark.parametrize(
    "choice",
    [{"type": "function", "function": {"name": "rm_rf"}}, "sometimes", {"type": "allowed_tools", "tools": []}],
)
def test_bad_tool_choice_is_refused(endpoint: InterceptionEndpoint, choice: Any) -> None:
    with pytest.raises(openai.BadRequestError, match="tool_choice"):
        _openai(endpoint, "badchoice").chat.completions.create(
            model="m", messages=USER, tools=TOOLS, tool_choice=choice
        )


def test_required_without_tools_is_refused(endpoint: InterceptionEndpoint) -> None:
    with pytest.raises(anthropic.BadRequestError, match="needs tools"):
        _anthropic(endpoint, "badchoice").messages.create(
            model="m", max_tokens=5, messages=USER, tool_choice={"type": "any"}
        )


@pytest.mark.parametrize(
    "fmt",
    [
        {"type": "json_object"},
        {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}},
    ],
)
def test_response_format_the_sampler_cannot_honour_is_a_clear_400(endpoint: InterceptionEndpoint, fmt: Any) -> None:
    client = _openai(endpoint, "format")
    with pytest.raises(openai.BadRequestError, match="response_format.*cannot constrain"):
        client.chat.completions.create(model="m", messages=USER, response_format=fmt)
    with pytest.raises(openai.BadRequestError, match="text.format"):
        client.responses.create(model="m", input="x", text={"format": {"type": "json_object"}})
    assert not endpoint.session("format").calls  # nothing was sampled


def test_response_format_text_is_accepted(endpoint: InterceptionEndpoint, script: Script) -> None:
    script.reply = "plain"
    reply = _openai(endpoint, "fmt-text").chat.completions.create(
        model="m", messages=USER, response_format={"type": "text"}
    )
    assert reply.choices[0].message.content == "plain"


def test_count_tokens_is_the_rendered_prompt(endpoint: InterceptionEndpoint, script: Script) -> None:
    client = _anthropic(endpoint, "count")
    messages = [{"role": "user", "content": [{"type": "text", "text": "how long is this?"}]}]
    counted = client.messages.count_tokens(model="m", system="sys", messages=messages, tools=ANTHROPIC_TOOLS)
    script.reply = "x"
    client.messages.create(model="m", max_tokens=5, system="sys", messages=messages, tools=ANTHROPIC_TOOLS)
    calls = endpoint.session("count").calls
    assert len(calls) == 1  # count_tokens samples and records nothing
    assert counted.input_tokens == len(calls[0].prompt_token_ids)
    with pytest.raises(anthropic.BadRequestError, match="messages"):
        client.messages.count_tokens(model="m", messages=[])


def test_rerender_holds_for_calls_with_options(endpoint: InterceptionEndpoint) -> None:
    calls = [call for session in endpoint.sessions.values() for call in session.calls]
    assert calls and check_rerender(RENDERER, [call for call in calls if call.choice == 0 and not call.problems]) == []


def test_n_then_the_harness_continues_its_second_choice() -> None:
    """A harness asks for ``n=2`` and goes on with the second choice: that call extends the second
    choice's context (no new segment); the trajectory gives the sibling choice its whole prompt and
    the continuation only its new tokens; the lineages are [0] and [1, 2]."""
    from rolloutgym_harness.lineages import link_calls

    sampler = ScriptedSampler(RENDERER.encode, lambda prompt, index: f"choice{index}", end_token_id=CharRenderer.END)
    with InterceptionEndpoint(TokenPolicy(sampler, RENDERER, max_tokens=50, name="scripted")) as served:
        client = _openai(served, "pick")
        first = client.chat.completions.create(model="m", messages=USER, n=2)
        picked = first.choices[1].message.content
        assert [choice.message.content for choice in first.choices] == ["choice0", "choice1"]
        more = [*USER, {"role": "assistant", "content": picked}, {"role": "user", "content": "more"}]
        client.chat.completions.create(model="m", messages=more)
        session = served.session("pick")
        calls = session.calls
        assert [(call.choice, call.extends, call.new_segment) for call in calls] == [
            (0, False, False),
            (1, False, False),
            (0, True, False),
        ]
        assert session.segments == 1 and check_rerender(RENDERER, calls) == []
        steps = session.trajectory().steps
    assert steps[1].observation_tokens == tuple(calls[1].prompt_token_ids)  # a sibling: its whole prompt
    assert steps[1].policy_info["choice"] == 1
    base = calls[1].prompt_token_ids + calls[1].completion_token_ids
    assert list(steps[2].observation_tokens) == calls[2].prompt_token_ids[len(base) :]
    assert calls[2].prompt_token_ids[: len(base)] == base
    assert link_calls(calls) == [None, None, 1]
