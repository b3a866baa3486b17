"""Reference replies built from BFCL's possible answers (what the ``oracle`` policy sends)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from ._tools import fc_name
from .grading import check_function

__all__ = ["reference_calls", "relevance_call"]

_MAX_COMBINATIONS = 4096


def _first_value(candidates: list[Any]) -> tuple[bool, Any]:
    for candidate in candidates:
        if candidate != "":
            return True, candidate
    return False, None


def _long(item: Any) -> str:
    return f"{item}L" if type(item) is int else json.dumps(item)


def _float(item: Any) -> str:
    return f"{item}f" if type(item) is float else json.dumps(item)


def _literals(value: Any) -> list[str]:
    """Ways a Java/JavaScript literal string can spell a possible value."""
    if type(value) is str:
        return [value, json.dumps(value)]
    if type(value) is bool:
        return ["true" if value else "false"]
    if type(value) is int:
        return [str(value), f"{value}L", f"{value}n"]
    if type(value) is float:
        return [repr(value), f"{value}f", str(int(value)) if value.is_integer() else repr(value)]
    if type(value) is list:
        spellings = []
        for element in (json.dumps, _long, _float, str):
            inner = ", ".join(element(item) for item in value)
            spellings += [
                f"new ArrayList<>(Arrays.asList({inner}))",
                f"new String[]{{{inner}}}",
                f"new int[]{{{inner}}}",
                f"[{inner}]",
                f"new Array({inner})",
            ]
        return [json.dumps(value), *spellings]
    if type(value) is dict:
        puts = " ".join(f"put({json.dumps(key)}, {json.dumps(item)});" for key, item in value.items())
        return [
            json.dumps(value),
            f"new HashMap<String, String>() {{{{ {puts} }}}}",
            "{" + ", ".join(f"{key}: {json.dumps(item)}" for key, item in value.items()) + "}",
        ]
    return [json.dumps(value)]


def _unwrap_dict(value: Any) -> Any:
    """A dict possible value lists the allowed values of each key: take the first of each."""
    if type(value) is not dict:
        return value
    chosen = {}
    for key, options in value.items():
        present, option = _first_value(options) if isinstance(options, list) else (True, options)
        if present:
            chosen[key] = option
    return chosen


def _reference_value(details: dict[str, Any], value: Any) -> Any:
    kind = details.get("type")
    if kind in ("dict", "HashMap"):
        return _unwrap_dict(value)
    if (
        kind in ("array", "ArrayList", "Array")
        and details.get("items", {}).get("type") == "dict"
        and type(value) is list
    ):
        return [_unwrap_dict(item) for item in value]
    return value


def _reference_call(function: dict[str, Any], answer: dict[str, Any], language: str) -> dict[str, Any]:
    name, candidates_by_param = next(iter(answer.items()))
    properties = function["parameters"].get("properties", {})
    chosen: dict[str, Any] = {}
    for param, candidates in candidates_by_param.items():
        present, value = _first_value(candidates)
        if present:
            chosen[param] = _reference_value(properties.get(param, {}), value)
    if language == "python":
        return {fc_name(name): chosen}
    # Java/JavaScript values travel as literal strings: pick spellings the checker accepts.
    options = [[(param, literal) for literal in _literals(value)] for param, value in chosen.items()]
    fallback = {fc_name(name): {param: spellings[0][1] for param, spellings in zip(chosen, options, strict=True)}}
    for combination in itertools.islice(itertools.product(*options), _MAX_COMBINATIONS):
        call = {fc_name(name): dict(combination)}
        try:
            if check_function(function, call, answer, language).valid:
                return call
        except Exception:  # noqa: BLE001 - a spelling the converter rejects is just not the one
            continue
    return fallback


def reference_calls(
    functions: list[dict[str, Any]], answers: list[dict[str, Any]], language: str
) -> list[dict[str, Any]]:
    """One call per possible answer: the first allowed value of each parameter it needs."""
    calls = []
    for answer in answers:
        name = next(iter(answer))
        function = next((item for item in functions if item["name"] == name), functions[0])
        calls.append(_reference_call(function, answer, language))
    return calls


_PLACEHOLDERS = {
    "string": "example",
    "integer": 1,
    "float": 1.0,
    "number": 1.0,
    "boolean": True,
    "array": [],
    "tuple": [],
    "dict": {},
    "object": {},
}


def relevance_call(functions: list[dict[str, Any]]) -> dict[str, Any]:
    """A call of the first function with placeholder required arguments.

    ``live_relevance`` has no possible answers: BFCL scores any decodable call as right.
    """
    function = functions[0]
    properties = function["parameters"].get("properties", {})
    arguments = {}
    for param in function["parameters"].get("required", []):
        described = properties.get(param, {})
        arguments[param] = described.get("default", _PLACEHOLDERS.get(described.get("type", "string"), "example"))
    return {fc_name(function["name"]): arguments}
