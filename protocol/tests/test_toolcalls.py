"""``normalize_tool_action``: every accepted shape reads as the protocol's message; nothing else changes."""

from __future__ import annotations

import json

import pytest
from rolloutgym_protocol.toolcalls import normalize_tool_action, read_tool_call

CANONICAL = [{"id": "c1", "name": "guess", "arguments": {"number": 7}}]


@pytest.mark.parametrize(
    "action",
    [
        {"role": "assistant", "content": "", "tool_calls": CANONICAL},
        {"role": "assistant", "content": "", "tool_calls": CANONICAL[0]},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "guess", "arguments": '{"number": 7}'}}
            ],
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "guess", "parameters": {"number": 7}}],
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "guess", "input": {"number": 7}}]},
        {"type": "tool_use", "id": "c1", "name": "guess", "input": {"number": 7}},
        {"id": "c1", "type": "function", "function": {"name": "guess", "arguments": {"number": 7}}},
        [{"id": "c1", "name": "guess", "arguments": '{"number": 7}'}],
    ],
)
def test_every_shape_reads_as_the_protocol_message(action: object) -> None:
    normalized = normalize_tool_action(action)
    assert normalized["role"] == "assistant" and normalized["tool_calls"] == CANONICAL


def test_what_is_not_a_call_is_handed_on_unchanged() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    for action in ["text", 42, None, [1, 2], [], {"role": "assistant", "content": "hi"}, {"tool_calls": 5}]:
        assert normalize_tool_action(action) == action
    odd = normalize_tool_action({"role": "assistant", "content": "", "tool_calls": [7, {"x": 1}]})
    assert odd["tool_calls"] == [7, {"x": 1}]  # the env answers these with its own error
    for raw in ("{not json", deep, "[1, 2]", json.dumps("text")):
        assert read_tool_call({"name": "f", "arguments": raw})["arguments"] == raw
    assert read_tool_call({"name": "f", "arguments": ""})["arguments"] == {}
    assert read_tool_call({"name": "f"}) == {"id": "call_0", "name": "f", "arguments": {}}
    assert read_tool_call({"name": 3}) is None
    text = normalize_tool_action(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "tool_use", "name": "f", "input": {}}],
        }
    )
    assert text["content"] == "a" and text["tool_calls"] == [{"id": "call_0", "name": "f", "arguments": {}}]
