"""Reply parsing: Hermes tool calls, thinking blocks, OpenAI message conversion."""

from __future__ import annotations

from rolloutgym.llm import (
    from_openai_message,
    is_thinking_malformed,
    observation_messages,
    parse_hermes_tool_calls,
    parse_reply,
    strip_thinking,
    to_openai_messages,
)

TOOLS = frozenset({"guess", "lookup"})


def test_hermes_blocks_become_tool_calls_with_the_text_around_them_as_content() -> None:
    text = (
        'Let me check.\n<tool_call>\n{"name": "guess", "arguments": {"number": '
        '7}}\n</tool_call>\n<tool_call>{"name": "lookup", "arguments": "{\\"id\\": 3}"}</tool_call>'
    )
    parsed = parse_reply(text, text_action=False, tool_names=TOOLS)
    assert not parsed.invalid
    assert parsed.action == {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [
            {"id": "call_0", "name": "guess", "arguments": {"number": 7}},
            {"id": "call_1", "name": "lookup", "arguments": {"id": 3}},
        ],
    }


def test_a_broken_tool_call_is_kept_as_a_call_and_reported() -> None:
    calls, problems, _ = parse_hermes_tool_calls('<tool_call>{"name": "guess", "arguments": {"number": 7</tool_call>')
    assert calls == [{"id": "call_0", "name": "guess", "arguments": {}}]
    assert "not valid JSON" in problems[0]
    calls, problems, _ = parse_hermes_tool_calls(
        '<tool_call>{"name": "guess", "arguments": {"number": 7}}'
    )  # truncated
    assert calls[0]["arguments"] == {"number": 7} and "not closed" in problems[0]
    calls, problems, _ = parse_hermes_tool_calls("<tool_call>[1, 2]</tool_call>")
    assert calls[0]["name"] == "unparseable_tool_call" and problems


def test_unknown_tools_and_non_object_arguments_are_invalid() -> None:
    parsed = parse_reply(
        '<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>', text_action=False, tool_names=TOOLS
    )
    assert parsed.invalid and "unknown tool 'delete_all'" in parsed.problems[0]
    parsed = parse_reply(
        '<tool_call>{"name": "guess", "arguments": [7]}</tool_call>', text_action=False, tool_names=TOOLS
    )
    assert parsed.action["tool_calls"][0]["arguments"] == {} and "must be a JSON object" in parsed.problems[0]


def test_a_plain_reply_is_a_final_answer() -> None:
    parsed = parse_reply("  The answer is 4.  ", text_action=False, tool_names=TOOLS)
    assert parsed.action == {"role": "assistant", "content": "The answer is 4."} and not parsed.invalid


def test_thinking_checks() -> None:
    assert not is_thinking_malformed("<think>a</think>b")
    assert is_thinking_malformed("<think>a")
    assert is_thinking_malformed("a</think>")
    assert is_thinking_malformed("<think><think>a</think></think>")
    assert not is_thinking_malformed("a</think>b", opened=True)
    assert strip_thinking("<think>x</think>answer") == "answer"
    assert strip_thinking("reasoning</think>answer", opened=True) == "answer"
    assert strip_thinking("answer<think>unfinished") == "answer"
    parsed = parse_reply(
        '<think>call guess?</think><tool_call>{"name": "guess", "arguments": {"number": 1}}</tool_call>',
        text_action=False,
    )
    assert len(parsed.action["tool_calls"]) == 1 and not parsed.malformed_thinking
    kept = parse_reply("<think>x</think>y", text_action=True, keep_thinking=True)
    assert kept.action == "<think>x</think>y"


def test_openai_round_trip() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi "}, {"type": "text", "text": "there"}]},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "guess", "arguments": {"number": 2}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "higher"},
    ]
    wire = to_openai_messages(messages)
    assert wire[0]["content"] == "hi there"
    assert wire[1]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "guess", "arguments": '{"number": 2}'}}
    ]
    assert wire[2] == {"role": "tool", "content": "higher", "tool_call_id": "c1"}
    action, problems = from_openai_message(wire[1])
    assert action == messages[1] and problems == []
    action, problems = from_openai_message(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "x", "function": {"name": "guess", "arguments": "{oops"}}],
        }
    )
    assert action["tool_calls"][0]["arguments"] == {} and "not valid JSON" in problems[0]


def test_observations_become_messages() -> None:
    assert observation_messages("hello") == [{"role": "user", "content": "hello"}]
    assert observation_messages({"role": "tool", "content": "x"}) == [{"role": "tool", "content": "x"}]
    assert observation_messages({"board": [1, 2]}) == [{"role": "user", "content": '{"board": [1, 2]}'}]
