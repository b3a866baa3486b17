"""Tool arguments no JSON library can print (issue 17): the model gets a tool error, the run goes on."""

from __future__ import annotations

import json
import math

import pytest
from rolloutgym_workflow._arguments import compile_checker

HUGE = 7 * 10**5000  # str() refuses it (Python's 4300-digit limit); jsonschema messages repr() it


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"amount": {"type": "number"}}},  # the SDK shorthand's fast path
        {
            "type": "object",
            "properties": {"amount": {"type": "string", "minLength": 1}},
            "required": ["amount"],
        },  # jsonschema
    ],
    ids=["shorthand", "jsonschema"],
)
@pytest.mark.parametrize(
    "value",
    [HUGE, [HUGE], {"k": HUGE}, math.nan, json.loads("1e400"), "\ud800", _nested(2000)],
    ids=["huge", "huge-in-list", "huge-in-object", "nan", "1e400", "surrogate", "deep"],
)
def test_hostile_values_get_an_error_message(schema: dict, value: object) -> None:
    check = compile_checker(schema)
    message = check({"amount": value})
    if message is not None:
        assert isinstance(message, str) and len(message) < 1000
        message.encode("utf-8", "backslashreplace")


def test_a_number_too_large_to_show_is_refused_not_raised() -> None:
    check = compile_checker({"type": "object", "properties": {"order_id": {"type": "string", "minLength": 1}}})
    assert "too large to show" in check({"order_id": HUGE})
    simple = compile_checker({"type": "object", "properties": {"order_id": {"type": "string"}}})
    assert "must be a string" in simple({"order_id": HUGE})
