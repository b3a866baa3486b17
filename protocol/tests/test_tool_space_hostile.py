"""Tool-call spaces under hostile arguments (issue 17, class 1): membership is a yes/no answer,
never an exception, so an env can turn the call into an invalid action or a tool error."""

from __future__ import annotations

import json
import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from rolloutgym_protocol import spaces
from rolloutgym_protocol.spaces import tools


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


HOSTILE = [
    math.nan,
    math.inf,
    -math.inf,
    json.loads("1e400"),
    10**400,
    7 * 10**5000,
    2**64,
    "\ud800",
    "٣",
    "３",
    "A" * 300_000,
    _nested(3000),
    [_nested(50)] * 3,
    b"\xff",
    object(),
    None,
    True,
    {"$float": "nan"},
]


@pytest.fixture()
def space() -> tools.ToolCallSpace:
    return tools.call(
        {
            "f": gym.spaces.Dict(
                {
                    "x": gym.spaces.Box(-1.0, 1.0, shape=(), dtype=np.float64),
                    "n": gym.spaces.Discrete(5),
                    "s": gym.spaces.Text(20),
                    "bits": gym.spaces.MultiBinary(2),
                }
            ),
            "g": gym.spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32),
        }
    )


@pytest.mark.parametrize("value", HOSTILE, ids=lambda value: type(value).__name__)
def test_hostile_arguments_are_simply_not_members(space: tools.ToolCallSpace, value: object) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for key in ("x", "n", "s", "bits"):
            arguments = {"x": 0.5, "n": 1, "s": "ok", "bits": [0, 1]}
            arguments[key] = value
            assert space.contains({"name": "f", "arguments": arguments}) is False
        assert space.contains({"name": "g", "arguments": value}) is False  # not even an object
        assert space.contains({"name": "f", "arguments": {"x": value}}) is False  # missing arguments


def test_valid_calls_stay_members(space: tools.ToolCallSpace) -> None:
    assert space.contains({"name": "f", "arguments": {"x": 0.5, "n": 1, "s": "ok", "bits": [0, 1]}})
    assert not space.contains({"name": "f", "arguments": {"x": math.nan, "n": 1, "s": "ok", "bits": [0, 1]}})
    assert not space.contains({"name": "unknown", "arguments": {}})


@pytest.mark.parametrize("value", HOSTILE[:12], ids=lambda value: type(value).__name__)
def test_from_jsonable_refuses_with_a_value_error(space: tools.ToolCallSpace, value: object) -> None:
    with pytest.raises(ValueError):
        space.from_jsonable([{"name": "f", "arguments": {"x": value, "n": 1, "s": "ok", "bits": [0, 1]}}])


def test_chat_messages_carry_hostile_arguments_for_the_env_to_judge() -> None:
    chat = spaces.messages.chat()
    for value in HOSTILE:
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "1", "name": "f", "arguments": {"x": value}}],
        }
        assert chat.contains([{"role": "user", "content": "q"}, message]) is True  # the env judges the values


def test_a_list_of_calls_is_a_member_as_a_tuple_is() -> None:
    """The protocol promises ordinary lists: a JSON-decoded list of calls is accepted."""
    import gymnasium as gym

    sequence = tools.calls({"lookup": gym.spaces.Dict({"q": gym.spaces.Text(20)})})
    call_value = {"name": "lookup", "arguments": {"q": "x"}}
    assert sequence.contains([call_value, call_value]) and sequence.contains((call_value,))
    assert sequence.contains([]) and not sequence.contains([{"name": "nope", "arguments": {}}])
    assert not sequence.contains("lookup") and not sequence.contains({"name": "lookup"})
