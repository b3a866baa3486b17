"""Text for any value (issue 26): integers past Python's int-to-text limit, broken reprs, cycles, deep nesting.

Every function of ``rolloutgym_protocol.display`` gives exactly what the builtin gives
whenever the builtin succeeds, and bounded text instead of an exception otherwise.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import pytest
from rolloutgym_protocol import RolloutError, Score, Step, Trajectory, validate_step_result
from rolloutgym_protocol.display import int_text, json_text, safe_repr, safe_str
from rolloutgym_protocol.errors import InvalidStepResult, json_error_text

HUGE = 7 * 10**5000  # str() refuses it: Python's 4300-digit limit
LIMIT = sys.get_int_max_str_digits()


class BrokenRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


class Big(int):
    """An int subclass (numpy-like wrappers, enums) past the limit."""


def _nested(depth: int) -> Any:
    value: Any = HUGE
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> list[Any]:
    items: list[Any] = [HUGE]
    items.append(items)
    return items


HOSTILE: dict[str, Any] = {
    "huge": HUGE,
    "negative huge": -HUGE,
    "just past the limit": 10**LIMIT,
    "int subclass": Big(HUGE),
    "in a list": [1, HUGE, -HUGE],
    "in a tuple": (HUGE,),
    "in a set": {HUGE},
    "in a dict value": {"amount": HUGE},
    "as a dict key": {HUGE: "x", "y": 1},
    "as a negative key": {-HUGE: [HUGE]},
    "nested": {"refunds": [{"order_id": "O-1", "amount": HUGE, "history": [{"k": [-HUGE]}]}]},
    "deep": _nested(300),
    "cycle": _cycle(),
    "broken repr": BrokenRepr(),
    "broken repr inside": {"x": [BrokenRepr(), HUGE]},
    "bytes": b"\x00\xff",
    "nan and inf": [math.nan, math.inf, -math.inf],
    "lone surrogate": "a\ud800",
}


@pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
def test_every_function_answers_for_any_value(value: Any) -> None:
    for function in (safe_repr, safe_str, json_text):
        text = function(value)
        assert isinstance(text, str) and len(text) < 100_000, function.__name__
    parsed = json.loads(json_text(value))  # valid JSON, numbers included
    assert parsed is not None or value is None


@pytest.mark.parametrize(
    "value",
    [0, -1, 10**4000, -(10**4299), 2**63, 1.5, "text", None, [1, {"a": (2, 3)}], {1: "int key", None: 0}],
    ids=["zero", "minus one", "4001 digits", "4299 digits", "2**63", "float", "str", "None", "nested", "int keys"],
)
def test_values_python_prints_read_as_python_prints_them(value: Any) -> None:
    assert safe_repr(value) == repr(value)
    assert safe_str(value) == str(value)
    assert json_text(value) == json.dumps(value, ensure_ascii=False)
    if type(value) is int:
        assert int_text(value) == str(value)


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (HUGE, "about 7.00000e+5000 (an integer too long to print)"),
        (-HUGE, "about -7.00000e+5000 (an integer too long to print)"),
        (10**5000 - 1, "about 1.00000e+5000 (an integer too long to print)"),  # rounds up, never "10.00000"
        (123456789 * 10**6000, "about 1.23457e+6008 (an integer too long to print)"),
        (Big(HUGE), "about 7.00000e+5000 (an integer too long to print)"),
    ],
    ids=["huge", "negative", "all nines", "mantissa", "int subclass"],
)
def test_an_integer_too_long_to_print_reads_as_its_magnitude(number: int, expected: str) -> None:
    assert int_text(number) == expected
    assert safe_repr(number) == safe_str(number) == expected


def test_nested_huge_integers_keep_the_shape_of_the_value() -> None:
    value = {"refunds": [{"amount": HUGE, "ok": True}], HUGE: [-HUGE, 2]}
    assert json.loads(json_text(value)) == {
        "refunds": [{"amount": int_text(HUGE), "ok": True}],
        int_text(HUGE): [int_text(-HUGE), 2],
    }
    assert safe_repr(value) == (
        f"{{'refunds': [{{'amount': {int_text(HUGE)}, 'ok': True}}], {int_text(HUGE)}: [{int_text(-HUGE)}, 2]}}"
    )
    assert json.loads(json_text({"a": [HUGE]}, indent=2, sort_keys=True)) == {"a": [int_text(HUGE)]}


def test_cycles_and_deep_nesting_are_cut_not_raised() -> None:
    assert json.loads(json_text(_cycle())) == [int_text(HUGE), "[...]"]
    deep = json.loads(json_text(_nested(300)))
    depth = 0
    while isinstance(deep, list):
        deep, depth = deep[0], depth + 1
    assert deep == "…" and depth == 64


def test_a_failing_default_and_a_broken_repr_fall_back_to_a_name() -> None:
    assert safe_repr(BrokenRepr()) == "<BrokenRepr object>"
    assert json.loads(json_text({"x": BrokenRepr()})) == {"x": "<BrokenRepr object>"}
    assert json.loads(json_text({"x": object()}, default=lambda value: 1 / 0))["x"].startswith("<object object")


def test_a_million_digit_integer_reads_as_its_magnitude() -> None:
    number = 3**2_000_000  # ~954,000 digits: str() with the limit lifted takes over a minute here
    text = int_text(number)  # from a logarithm: no decimal conversion at all
    assert text == "about 3.23176e+954242 (an integer too long to print)"
    assert json_text([number]) == json.dumps([text])


def test_records_with_huge_integers_have_a_repr() -> None:
    step = Step([], {"amount": HUGE}, 0.0, [], True, False)
    trajectory = Trajectory([], (step,))
    error = RolloutError("ValueError", "boom", "env", 0, None, 1, trajectory, {"amount": -HUGE})
    for record in (step, trajectory, error):
        assert int_text(HUGE) in repr(record)
    assert repr(Step([], 1, 0.0, [], True, False)).startswith("Step(observation=[], action=1, reward=0.0")
    assert RolloutError.from_dict(json.loads(json.dumps(error.to_dict()))).action == {"amount": -HUGE}


def test_an_env_reward_or_score_past_the_float_range_is_a_named_error() -> None:
    with pytest.raises(InvalidStepResult, match=r"reward about 7\.00000e\+5000 \(an integer too long to print\)"):
        validate_step_result(([], HUGE, True, False, {}))
    with pytest.raises(InvalidStepResult, match=r"reward about -7\.00000e\+5000 .*must be finite"):
        validate_step_result(([], -HUGE, True, False, {}))
    with pytest.raises(ValueError, match=r"score must be finite, got about 7\.00000e\+5000"):
        Score(HUGE)


@pytest.mark.parametrize(
    "text", ["9" * 5000, '{"amount": -' + "1" * 4301 + "}", "[" + "2" * 10_000 + "]"], ids=["bare", "object", "list"]
)
def test_json_with_a_number_past_the_limit_gets_a_readable_reason(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        json.loads(text)
    assert json_error_text(caught.value) == f"a number has more than {LIMIT} digits"
