"""Spaces: membership, strictness, sampling, JSON round trips, JSON schema export (Python 3.11 safe)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rolloutgym_protocol import spaces

SEARCH = {
    "search": gym.spaces.Dict({"query": spaces.text.text(min_length=1, max_length=50), "k": gym.spaces.Discrete(5)})
}


def test_text_space_accepts_any_unicode_within_bounds() -> None:
    space = spaces.text.text(min_length=1, max_length=3, sample_alphabet="ab")
    assert space.contains("日本")
    assert not space.contains("")
    assert not space.contains("abcd")
    assert not space.contains(3)
    assert not space.contains(b"ab")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_length": -1},
        {"min_length": 5, "max_length": 2},
        {"min_length": 40, "sample_max_length": 10},
        {"sample_alphabet": ""},
    ],
)
def test_text_space_rejects_bad_bounds(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        spaces.text.text(**kwargs)


def test_text_sampling_is_seeded() -> None:
    assert spaces.text.text(seed=3).sample() == spaces.text.text(seed=3).sample()


def test_message_space_is_strict_and_works_on_311() -> None:
    space = spaces.messages.message()
    assert space.contains({"role": "user", "content": "hi"})
    assert space.contains({"role": "assistant", "content": "", "tool_calls": [{"name": "f", "arguments": {}}]})
    assert space.contains(
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "url": "data:"}]}
    )
    assert not space.contains({"role": "user", "content": "hi", "extra": 1})
    assert not space.contains({"role": "robot", "content": "hi"})
    assert not space.contains({"role": "user", "content": [{"type": "video", "url": "x"}]})
    assert not space.contains({"role": "user", "content": 5})


def test_chat_space_requires_a_list() -> None:
    chat = spaces.messages.chat(min_length=1)
    message = {"role": "user", "content": "hi"}
    assert chat.contains([message])
    assert not chat.contains((message,))
    assert not chat.contains([])
    assert spaces.messages.chat(seed=9).sample() == spaces.messages.chat(seed=9).sample()


def test_tool_call_space_membership() -> None:
    space = spaces.tools.call(SEARCH)
    assert space.contains({"name": "search", "arguments": {"query": "x", "k": 2}, "id": "c1"})
    assert space.contains({"name": "search", "arguments": {"query": "x", "k": np.int64(2)}})
    assert not space.contains({"name": "search", "arguments": {"query": "x"}})
    assert not space.contains({"name": "search", "arguments": {"query": "x", "k": 2, "z": 1}})
    assert not space.contains({"name": "search", "arguments": {"query": "x", "k": "2"}})
    assert not space.contains({"name": "other", "arguments": {"query": "x", "k": 2}})
    assert not space.contains({"name": "search", "arguments": {"query": "x", "k": 2}, "id": 5})


def test_tool_call_json_uses_plain_argument_objects() -> None:
    space = spaces.tools.call(SEARCH)
    value = {"name": "search", "arguments": {"query": "x", "k": 2}, "id": "c"}
    encoded = space.to_jsonable([value])
    assert encoded == [{"name": "search", "arguments": {"query": "x", "k": 2}, "id": "c"}]
    assert space.from_jsonable(encoded) == [value]
    with pytest.raises(ValueError):
        space.from_jsonable([{"name": "search", "arguments": {"query": ["x"], "k": [2]}}])


def test_tool_space_constructor_errors() -> None:
    with pytest.raises(ValueError):
        spaces.tools.call({})
    with pytest.raises(ValueError):
        spaces.tools.call({"": gym.spaces.Discrete(2)})
    with pytest.raises(TypeError, match="gymnasium Space"):
        spaces.tools.call({"f": {"type": "object"}})  # type: ignore[dict-item]


def test_tool_definitions_export_json_schema() -> None:
    space = spaces.tools.call(SEARCH, descriptions={"search": "Search the web."})
    (definition,) = space.tool_definitions()
    assert definition["function"]["description"] == "Search the web."
    assert definition["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "k": {"type": "integer", "minimum": 0, "maximum": 4},
            "query": {"type": "string", "minLength": 1, "maxLength": 50},
        },
        "required": ["k", "query"],
        "additionalProperties": False,
    }
    assert spaces.to_json_schema(gym.spaces.Box(0.0, 1.0, shape=())) == {
        "type": "number",
        "minimum": 0.0,
        "maximum": 1.0,
    }
    assert spaces.to_json_schema(gym.spaces.Sequence(gym.spaces.Discrete(3)))["type"] == "array"
    with pytest.raises(TypeError, match="json_schema"):
        spaces.to_json_schema(gym.spaces.Graph(node_space=gym.spaces.Discrete(2), edge_space=None))


def test_token_spaces() -> None:
    assert spaces.tokens.id(10).contains(9)
    sequence = spaces.tokens.sequence(100)
    assert sequence.contains((1, 2, 3))
    with pytest.raises(ValueError):
        spaces.tokens.id(0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_tool_call_samples_round_trip_through_json(seed: int) -> None:
    space = spaces.tools.call(SEARCH, include_id_in_samples=True, seed=seed)
    value = space.sample()
    assert space.contains(value)
    assert space.from_jsonable(space.to_jsonable([value]))[0]["arguments"]["k"] == value["arguments"]["k"]


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=40))
def test_text_membership_matches_length(text: str) -> None:
    space = spaces.text.text(max_length=20)
    assert space.contains(text) == (len(text) <= 20)
