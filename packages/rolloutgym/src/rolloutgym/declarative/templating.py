"""``${args.x}`` substitution in tool templates (``value``, ``response``, ``fixturePath``, ``mutates``).

Rules:

* Only ``${args.NAME}`` and ``${args.NAME.KEY...}`` placeholders exist; they walk the
  tool-call arguments as plain JSON (dict keys, list indices). Nothing is ever evaluated,
  and names that start with ``_`` are refused, so ``${args.__class__}`` is just an error.
* A string that is exactly one placeholder takes the argument's value with its type
  (``"${args.qty}"`` with ``2`` gives ``2``); a placeholder inside a longer string is
  replaced by the value's text (JSON for objects and lists).
* A placeholder whose argument is missing raises :class:`TemplateError` naming it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from rolloutgym_protocol.display import json_text

__all__ = ["MAX_TEMPLATE_DEPTH", "TemplateError", "check_template", "compile_template", "interpolate", "placeholders"]

MAX_TEMPLATE_DEPTH = 32
"""The deepest nesting of lists and objects a template may have."""

_ANY_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_NAME = r"[A-Za-z0-9][A-Za-z0-9_-]*"
_ARGS_PLACEHOLDER = re.compile(rf"^\s*args\.({_NAME}(?:\.{_NAME})*)\s*$")


class TemplateError(ValueError):
    """A template is malformed or refers to an argument the call did not give."""


def _parse(expression: str) -> tuple[str, ...]:
    match = _ARGS_PLACEHOLDER.match(expression)
    if match is None:
        raise TemplateError(
            f"unsupported placeholder '${{{expression[:60]}}}': "
            "only ${args.NAME} (optionally ${args.NAME.KEY}) is substituted"
        )
    return tuple(match.group(1).split("."))


def check_template(template: Any, *, depth: int = 0) -> None:
    """Raise :class:`TemplateError` for a malformed placeholder or nesting deeper than allowed."""
    if depth > MAX_TEMPLATE_DEPTH:
        raise TemplateError(f"template nests deeper than {MAX_TEMPLATE_DEPTH} levels")
    if isinstance(template, str):
        for match in _ANY_PLACEHOLDER.finditer(template):
            _parse(match.group(1))
        if "${" in _ANY_PLACEHOLDER.sub("", template):
            raise TemplateError(f"unterminated placeholder in {template[:60]!r}; write ${{args.NAME}}")
    elif isinstance(template, Mapping):
        for key, value in template.items():
            check_template(key, depth=depth + 1)
            check_template(value, depth=depth + 1)
    elif isinstance(template, list):
        for value in template:
            check_template(value, depth=depth + 1)


def placeholders(template: Any) -> set[str]:
    """The top-level argument names a template refers to (``{"order_id", "amount"}``)."""
    found: set[str] = set()
    if isinstance(template, str):
        for match in _ANY_PLACEHOLDER.finditer(template):
            found.add(_parse(match.group(1))[0])
    elif isinstance(template, Mapping):
        for key, value in template.items():
            found |= placeholders(key) | placeholders(value)
    elif isinstance(template, list):
        for value in template:
            found |= placeholders(value)
    return found


def _lookup(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    current: Any = arguments
    for position, part in enumerate(path):
        dotted = ".".join(path[: position + 1])
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            raise TemplateError(f"missing argument '{dotted}'")
    return current


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json_text(value)  # any value: an int too long to print as text


def interpolate(template: Any, arguments: Mapping[str, Any]) -> Any:
    """Return a copy of ``template`` with every ``${args...}`` placeholder filled in.

    Raises:
        TemplateError: a placeholder names a missing argument (or is malformed).
    """
    if isinstance(template, str):
        if "${" not in template:
            return template
        whole = _ANY_PLACEHOLDER.fullmatch(template)
        if whole is not None:
            return _lookup(arguments, _parse(whole.group(1)))
        return _ANY_PLACEHOLDER.sub(lambda match: _text(_lookup(arguments, _parse(match.group(1)))), template)
    if isinstance(template, Mapping):
        return {
            _text(interpolate(key, arguments)) if isinstance(key, str) else key: interpolate(value, arguments)
            for key, value in template.items()
        }
    if isinstance(template, list):
        return [interpolate(value, arguments) for value in template]
    return template


def compile_template(template: Any) -> Callable[[Mapping[str, Any]], Any]:
    """Parse ``template`` once; the returned function fills it like :func:`interpolate`, faster.

    Raises:
        TemplateError: a malformed placeholder (at compile time).
    """
    check_template(template)
    if isinstance(template, str):
        if "${" not in template:
            return lambda arguments: template
        whole = _ANY_PLACEHOLDER.fullmatch(template)
        if whole is not None:
            path = _parse(whole.group(1))
            if len(path) == 1:
                name = path[0]

                def single(arguments: Mapping[str, Any]) -> Any:
                    try:
                        return arguments[name]
                    except KeyError:
                        raise TemplateError(f"missing argument '{name}'") from None

                return single
            return lambda arguments: _lookup(arguments, path)
        return lambda arguments: interpolate(template, arguments)
    if isinstance(template, Mapping):
        if any("${" in key for key in template if isinstance(key, str)):
            return lambda arguments: interpolate(template, arguments)
        parts = [(key, compile_template(value)) for key, value in template.items()]
        return lambda arguments: {key: fill(arguments) for key, fill in parts}
    if isinstance(template, list):
        items = [compile_template(value) for value in template]
        return lambda arguments: [fill(arguments) for fill in items]
    return lambda arguments: template
