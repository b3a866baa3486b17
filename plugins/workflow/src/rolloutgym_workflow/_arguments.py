"""Checking tool-call arguments against a tool's ``paramsSchema`` before the tool runs.

The SDK shorthand (``{"amount": "number"}``) compiles to a few ``isinstance`` checks; argument
schemas written as JSON schema go through ``jsonschema``. Either way the model gets an error
message it can act on, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from rolloutgym_protocol.display import json_text, safe_str
from rolloutgym_protocol.errors import json_error_text
from rolloutgym_protocol.jsonvalues import strict_text

__all__ = ["MAX_ARGUMENT_DEPTH", "MAX_ARGUMENT_TEXT", "ArgumentChecker", "compile_checker", "parse_arguments"]

MAX_ARGUMENT_DEPTH = 32
"""The deepest nesting of lists/objects accepted in tool-call arguments."""
MAX_ARGUMENT_TEXT = 100_000
"""The most characters of text accepted in one tool call's arguments."""

ArgumentChecker = Callable[[dict[str, Any]], "str | None"]
"""``checker(arguments) -> None`` when valid, else an error message for the model."""

_SIMPLE_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
}


def _size(value: Any, depth: int) -> int:
    """Characters of text in ``value``; raises ValueError when too deep or too large."""
    if depth > MAX_ARGUMENT_DEPTH:
        raise ValueError(f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels")
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        total = 0
        for key, item in value.items():
            total += len(key) if type(key) is str else 1
            kind = type(item)
            if kind is str:
                total += len(item)
            elif kind is dict or kind is list or isinstance(item, (dict, list)):
                total += _size(item, depth + 1)
            else:
                total += 1
        return total
    if isinstance(value, list):
        return sum(_size(item, depth + 1) for item in value)
    return 1


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """``(arguments, None)`` or ``(None, error)``: accepts a dict or a JSON object string."""
    if isinstance(raw, str):
        if len(raw) > MAX_ARGUMENT_TEXT:
            return None, f"arguments are {len(raw)} characters; at most {MAX_ARGUMENT_TEXT} are accepted"
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError) as exc:  # ValueError: also a number past Python's digit limit
            reason = (
                exc.msg
                if isinstance(exc, json.JSONDecodeError)
                else "too deeply nested"
                if isinstance(exc, RecursionError)
                else json_error_text(exc)
            )
            return (
                None,
                f'arguments are not valid JSON ({reason}); send a JSON object such as {{"order_id": "O-1"}}',
            )
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None, f"arguments must be a JSON object, got {type(raw).__name__}"
    try:
        if _size(raw, 0) > MAX_ARGUMENT_TEXT:
            return None, f"arguments are larger than {MAX_ARGUMENT_TEXT} characters"
    except ValueError as exc:
        return None, str(exc)
    except RecursionError:
        return None, f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels"
    return raw, None


def _describe(value: Any) -> str:
    text = strict_text(json_text(value))  # never raises: NaN, 10**5000, "\ud800", deep nesting, cycles
    return text if len(text) <= 60 else text[:57] + "..."


def compile_checker(schema: Mapping[str, Any]) -> ArgumentChecker:
    """A checker for an expanded JSON schema (see ``expand_params_schema``)."""
    properties = schema.get("properties") or {}
    simple = all(
        isinstance(spec, Mapping) and (not spec or (set(spec) == {"type"} and spec["type"] in _SIMPLE_TYPES))
        for spec in properties.values()
    )
    if simple and set(schema) <= {"type", "properties", "required", "additionalProperties"}:
        return _simple_checker(
            properties, list(schema.get("required") or []), schema.get("additionalProperties", True) is False
        )
    return _jsonschema_checker(schema)


def _anything(value: Any) -> bool:
    return True


def _simple_checker(properties: Mapping[str, Any], required: list[str], closed: bool) -> ArgumentChecker:
    types = {
        name: (spec.get("type", "any value"), _SIMPLE_TYPES.get(spec.get("type", ""), _anything))
        for name, spec in properties.items()
    }
    expected = ", ".join(f"{name}: {spec[0]}" for name, spec in types.items()) or "no arguments"

    def check(arguments: dict[str, Any]) -> str | None:
        for name in required:
            if name not in arguments:
                return f"missing argument '{name}' (expected {expected})"
        for name, value in arguments.items():
            spec = types.get(name)
            if spec is None:
                if closed:
                    return f"unknown argument '{name}' (expected {expected})"
                continue
            if not spec[1](value):
                return f"argument '{name}' must be a {spec[0]}, got {_describe(value)}"
        return None

    return check


def _jsonschema_checker(schema: Mapping[str, Any]) -> ArgumentChecker:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"invalid JSON schema for the tool arguments: {exc.message}") from None
    validator = Draft202012Validator(schema)

    def check(arguments: dict[str, Any]) -> str | None:
        try:
            error = next(iter(validator.iter_errors(arguments)), None)
            if error is None:
                return None
            message = error.message
        except RecursionError:
            return "arguments nest too deeply"
        except (ValueError, OverflowError):  # jsonschema's message repr()s the value: 10**5000 cannot be
            return f"arguments do not match the tool's schema (a value is too large to show): {_describe(arguments)}"
        where = ".".join(safe_str(part) for part in error.absolute_path)
        return f"argument '{where}': {message}" if where else f"arguments: {message}"

    return check
