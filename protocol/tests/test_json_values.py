"""Lossless, strict JSON for hostile values (issue 17, class 1): every value a policy can
produce encodes to strict JSON (no NaN/Infinity tokens, UTF-8 encodable, bounded nesting)
and decodes back to what was encoded."""

from __future__ import annotations

import json
import math
import sys
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rolloutgym_protocol import jsonvalues
from rolloutgym_protocol.jsonvalues import MAX_DEPTH, OpaqueValue, dumps, from_jsonable, loads, to_jsonable


def _strict(text: str) -> object:
    """Parse as a strict JSON reader would: NaN/Infinity tokens and bad UTF-8 are refused."""

    def refuse(token: str) -> object:
        raise AssertionError(f"non-standard JSON token {token} in {text[:80]!r}")

    text.encode("utf-8")  # raises on lone surrogates
    return json.loads(text, parse_constant=refuse)


def _nesting(data: object) -> int:
    """The nesting depth of parsed JSON data, computed without recursion."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in value)
    return deepest


def _same(left: object, right: object) -> bool:
    """Equality without recursion; NaN equals NaN, bool is not int."""
    stack = [(left, right)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, float):
            if not (a == b or (math.isnan(a) and math.isnan(b))):
                return False
        elif isinstance(a, dict):
            if list(a) != list(b):
                return False
            stack.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif a != b:
            return False
    return True


def _nested(depth: int, leaf: object = 1) -> object:
    value = leaf
    for level in range(depth):
        value = {"a": value} if level % 2 else [value, "x"]
    return value


HOSTILE = {
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "1e400 parsed": json.loads("1e400"),
    "-1e400 parsed": json.loads("-1e400"),
    "int above 2**63": 2**63,
    "int below -2**63": -(2**63) - 5,
    "int beyond float range": 10**400,
    "int beyond the 4300-digit str limit": 7 * 10**5000 + 3,
    "negative huge int": -(10**6000),
    "lone high surrogate": "\ud800",
    "lone low surrogate inside text": "ab\udfffcd",
    "reversed surrogate pair": "\udc00\ud800",
    "surrogate key": {"\ud83d": "v"},
    "non-ASCII text": "٣ ３ 𝟛 ünïcødé \u202e\u0000",
    "bytes": b"\x00\xff\xfe",
    "tag look-alike dict": {"$float": "nan"},
    "tag look-alike map": {"$map": [[1, 2]]},
    "tag look-alike nested": [{"$deep": []}, {"$str": [55296]}, {"$object": {"type": "x", "repr": "y"}}],
    "two-key dict with a tag name": {"$float": 1, "b": 2},
    "empty containers": {"a": [], "b": {}, "c": [[]], "": ""},
    "nested 5000 levels": _nested(5000),
    "nested 300 levels with NaN leaf": _nested(300, math.nan),
    "nested past the limit with a tag look-alike": _nested(MAX_DEPTH + 3, {"$deep": [["value", 1]]}),
    "nested past the limit with bytes and surrogates": _nested(
        MAX_DEPTH * 2, ["\ud800", b"\x01", {"\udc00": -math.inf}]
    ),
    "wide and deep": [_nested(MAX_DEPTH + 1, index) for index in range(20)],
    "floats": [0.1, -0.0, 1e308, 5e-324, 1.0],
    "plain scalars": [None, True, False, 0, -1, "", "s"],
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_values_round_trip_through_strict_json(name: str) -> None:
    value = HOSTILE[name]
    text = dumps(value)
    data = _strict(text)
    assert _nesting(data) <= 2 * MAX_DEPTH + 8
    assert _same(loads(text), value)
    assert dumps(loads(text)) == text  # stable: re-encoding what was read gives the same line


def test_plain_json_is_written_unchanged() -> None:
    value = {"role": "assistant", "content": "hi ü", "tool_calls": [{"name": "f", "arguments": {"k": [1, 2.5, None]}}]}
    assert to_jsonable(value) == value
    assert from_jsonable(value) == value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (math.nan, {"$float": "nan"}),
        (-math.inf, {"$float": "-inf"}),
        (2**64, {"$int": str(2**64)}),
        ("a\ud800", {"$str": ["a", 0xD800]}),
        (b"hi", {"$bytes": "aGk="}),
        ({"$int": "1"}, {"$map": [["$int", "1"]]}),
    ],
)
def test_documented_tagged_forms(value: object, expected: object) -> None:
    assert to_jsonable(value) == expected


def test_non_json_python_values_become_their_json_form() -> None:
    assert to_jsonable((1, (2, 3))) == [1, [2, 3]]
    assert to_jsonable({3, 1, 2}) == [1, 2, 3]
    assert isinstance(to_jsonable({1, "a", None}), list)  # mixed types still sort
    assert to_jsonable({1: "a", None: "b", 2.5: "c"}) == {"1": "a", "null": "b", "2.5": "c"}
    assert to_jsonable({True: "d", 10**5000: "e"}) == {"true": "d", hex(10**5000): "e"}
    assert to_jsonable(OrderedDict(b=1)) == {"b": 1}
    # keys that collide once made text keep both entries
    collided = to_jsonable({1: "int", "1": "str"})
    assert collided == {"$map": [["1", "int"], ["1", "str"]]}


def test_numpy_values_become_python_values() -> None:
    assert to_jsonable(np.float32("nan")) == {"$float": "nan"}
    assert to_jsonable(np.int64(-5)) == -5 and type(to_jsonable(np.int64(-5))) is int
    assert to_jsonable(np.bool_(True)) is True
    assert to_jsonable(np.arange(4).reshape(2, 2)) == [[0, 1], [2, 3]]
    assert to_jsonable(np.array([np.inf, 1.0])) == [{"$float": "inf"}, 1.0]
    assert to_jsonable({"k": np.float64(2.5)}) == {"k": 2.5}


def test_arbitrary_objects_are_described_and_read_back_as_opaque_values() -> None:
    class Odd:
        def __repr__(self) -> str:
            return "<odd \ud800>"

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    for value in (Odd(), Broken(), object(), type, print):
        text = dumps(value)
        _strict(text)
        back = loads(text)
        assert isinstance(back, OpaqueValue)
        assert back.type.endswith(type(value).__qualname__)
        assert dumps(back) == text
    assert loads(dumps(Odd())).repr == "<odd \ud800>"


def test_dataclasses_records_and_models_become_dicts() -> None:
    from pydantic import BaseModel
    from rolloutgym_protocol import Score

    @dataclass
    class Point:
        x: float
        label: str

    class Model(BaseModel):
        n: float

    assert to_jsonable(Point(math.inf, "\ud800")) == {"x": {"$float": "inf"}, "label": {"$str": [0xD800]}}
    assert to_jsonable(Model(n=math.nan)) == {"n": {"$float": "nan"}}
    assert to_jsonable(Score(1.0, metadata={"answer": "\ud800"}))["metadata"] == {"answer": {"$str": [0xD800]}}


def test_self_referencing_containers_are_cut_not_looped() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    cycle: dict[str, object] = {}
    cycle["self"] = cycle
    for value in (loop, cycle):
        text = dumps(value)
        _strict(text)
        assert "[...]" in text or "{...}" in text
        assert dumps(loads(text)) == text


def test_broken_containers_do_not_raise() -> None:
    class BadMapping(dict):
        def items(self):  # type: ignore[override]
            raise RuntimeError("boom")

    class BadToList:
        def tolist(self) -> object:
            raise RuntimeError("boom")

    for value in (BadToList(), [BadToList()], _nested(MAX_DEPTH + 2, BadToList())):
        _strict(dumps(value))
    _strict(dumps(BadMapping(a=1)))


def test_malformed_tags_read_as_the_dicts_they_are() -> None:
    for data in (
        {"$float": "bogus"},
        {"$int": "12x"},
        {"$str": ["a", 65]},
        {"$bytes": "!!"},
        {"$map": 3},
        {"$object": []},
    ):
        assert from_jsonable(data) == data
    assert from_jsonable({"$deep": [["list", 2], ["value", 1]]}) == [1]  # truncated nodes: what is there


def test_plain_data_deeper_than_the_decoder_goes_is_returned_as_is() -> None:
    deep = _nested(1000)
    assert from_jsonable(deep) is not None  # no RecursionError


def test_loads_refuses_nan_tokens() -> None:
    with pytest.raises(ValueError, match="NaN is not valid JSON"):
        loads('{"x": NaN}')


def test_encoding_is_iterative_beyond_the_limit_even_with_a_low_recursion_limit() -> None:
    value = _nested(20000)
    old = sys.getrecursionlimit()
    text = dumps(value)
    sys.setrecursionlimit(max(old, 400))
    try:
        assert _same(loads(text), value)
    finally:
        sys.setrecursionlimit(old)


def test_module_is_public() -> None:
    import rolloutgym_protocol

    assert rolloutgym_protocol.from_jsonable is from_jsonable
    assert rolloutgym_protocol.to_jsonable is to_jsonable
    assert "$deep" in (jsonvalues.__doc__ or "")


# ------------------------------------------------------------------ records


def _hostile_trajectory() -> object:
    from rolloutgym_protocol import Score, Step, Trajectory

    action = {
        "role": "assistant",
        "content": "\ud800 ٣",
        "tool_calls": [
            {"id": "c", "name": "t", "arguments": {"n": math.nan, "big": 10**400, "deep": _nested(400), "b": b"\x00"}}
        ],
    }
    score = Score(
        0.0, {"format": Score(0.0, feedback="got '\udfff'")}, {"answer": -math.inf}, feedback="answer '\ud800' is wrong"
    )
    step = Step(
        observation=[{"role": "user", "content": "q"}],
        action=action,
        reward=math.nan,
        next_observation={"$float": "nan"},
        terminated=True,
        truncated=False,
        info={"score": score, 7: "int key"},
        policy_info={"raw": "\ud800"},
        policy_tokens=(1, 2),
        policy_logprobs=(-0.5, -math.inf),
        policy_stop_reason="stop\ud800",
    )
    return Trajectory(
        initial_observation={"x": math.inf}, steps=(step,), metadata={"seed": 2**70}, stop_reason="terminated"
    )


def test_records_with_hostile_values_are_strict_json_and_round_trip() -> None:
    from rolloutgym_protocol import RolloutError, Trajectory, TrajectoryGroup

    trajectory = _hostile_trajectory()
    error = RolloutError("ValueError", "bad \ud800", "env", 1, "tb \udc00", 0, partial=trajectory)
    group = TrajectoryGroup(item={"q": math.nan}, item_id="t0", trajectories=(trajectory,), errors=(error,))
    text = json.dumps(group.to_dict(), ensure_ascii=False, allow_nan=False)
    _strict(text)
    back = TrajectoryGroup.from_dict(json.loads(text))
    assert json.dumps(back.to_dict(), ensure_ascii=False, allow_nan=False) == text
    step = back.trajectories[0].steps[0]
    assert math.isnan(step.reward)
    assert math.isnan(step.action["tool_calls"][0]["arguments"]["n"])
    assert step.action["tool_calls"][0]["arguments"]["big"] == 10**400
    assert step.action["tool_calls"][0]["arguments"]["b"] == b"\x00"
    assert step.action["content"] == "\ud800 ٣"
    assert step.next_observation == {"$float": "nan"}  # a dict that looks like a tag stays a dict
    assert step.policy_logprobs == (-0.5, -math.inf)
    assert step.info["7"] == "int key"
    assert step.score is not None and step.score.metadata == {"answer": -math.inf}
    assert step.score.feedback == "answer '\\ud800' is wrong"  # text fields keep an escape, readable
    assert back.trajectories[0].metadata == {"seed": 2**70}
    assert back.errors[0].partial is not None and back.errors[0].partial.steps[0].action == step.action
    assert back.errors[0].error_message == "bad \\ud800"
    assert isinstance(Trajectory.from_dict(trajectory.to_dict()), Trajectory)


def test_error_records_from_old_files_still_read() -> None:
    from rolloutgym_protocol import RolloutError

    old = {"error_type": "E", "error_message": "m", "where": "env", "member": 0, "traceback": None, "step": None}
    error = RolloutError.from_dict(old)
    assert error.partial is None
    assert error.to_dict() == old  # no new key unless a partial trajectory exists


def test_error_from_an_exception_whose_str_fails() -> None:
    from rolloutgym_protocol import RolloutError

    class Nasty(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    try:
        raise Nasty()
    except Nasty as exc:
        error = RolloutError.from_exception(exc, where="env")
    assert error.error_message == "<unprintable Nasty>"


_hostile_scalars = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))
    | st.binary(max_size=8)
    | st.none()
    | st.booleans()
)
_hostile_values = st.recursive(
    _hostile_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(exclude_categories=())) | st.sampled_from(["$float", "$map"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=30,
)


@given(_hostile_values)
@settings(max_examples=300, deadline=None)
def test_any_generated_value_round_trips(value: object) -> None:
    text = dumps(value)
    _strict(text)
    assert _same(loads(text), value)
