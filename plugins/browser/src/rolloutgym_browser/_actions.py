"""The browser tools (OpenAI-style definitions) and the one validation layer of their arguments.

Everything a policy sends passes through here before either backend sees it, so the ``dom``
and ``chromium`` backends accept and refuse exactly the same actions, and nothing a policy
sends can make a backend fail (an unscored environment error): a refused call is an
:class:`ActionError`, counted as an invalid action. The rules follow what a real browser
accepts: text is bounded (:data:`LIMITS`), holds no unpaired surrogates and no control
characters, one-line fields take no line breaks, a number field takes an HTML "valid
floating-point number" in ASCII digits (``٣`` and ``３`` are refused, as Chromium refuses
them), an email or URL field drops surrounding spaces as a browser does, and a path stays
short enough for any browser and server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol.display import safe_str

__all__ = [
    "BROWSER_TOOLS",
    "LIMITS",
    "MAX_CALLS_PER_MESSAGE",
    "ActionError",
    "CheckedToolCall",
    "call_id_of",
    "check_path",
    "element_error",
    "option_value",
    "parse_tool_call",
    "prepare_typed_text",
    "shown",
]

#: The longest string each argument may hold (characters).
LIMITS = {"element_id": 200, "text": 4000, "option": 500, "path": 2000, "direction": 10, "answer": 20000}
#: Tool calls run from one assistant message; more are answered with an error each.
MAX_CALLS_PER_MESSAGE = 32
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_BREAK = re.compile(r"[\n\r\u2028\u2029]")
# The HTML standard's "valid floating-point number": ASCII digits only, no '+', no '5.'.
_HTML_NUMBER = re.compile(r"-?(?:[0-9]+|[0-9]*\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_ASCII_SPACE = " \t\n\f\r"
_MULTI_LINE = frozenset({"textarea"})


def shown(text: Any, limit: int = 60) -> str:
    """``repr`` of ``text`` cut to ``limit`` characters, for error messages that echo the policy (any value:
    a non-string is shown as its text, e.g. an integer too long to print)."""
    if not isinstance(text, str):
        text = safe_str(text)
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text)} characters)"


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_ELEMENT = {"type": "string", "description": "The element id shown in brackets in the page text, e.g. 'search'."}

BROWSER_TOOLS: list[dict[str, Any]] = [
    _tool("click", "Click a link, button or checkbox.", {"element_id": _ELEMENT}, ["element_id"]),
    _tool(
        "type",
        "Replace the text of a textbox with `text`.",
        {"element_id": _ELEMENT, "text": {"type": "string"}},
        ["element_id", "text"],
    ),
    _tool(
        "select",
        "Choose an option of a combobox, by its label as shown in the page text.",
        {"element_id": _ELEMENT, "option": {"type": "string"}},
        ["element_id", "option"],
    ),
    _tool(
        "check",
        "Check (checked=true, the default) or uncheck a checkbox.",
        {"element_id": _ELEMENT, "checked": {"type": "boolean"}},
        ["element_id"],
    ),
    _tool(
        "goto",
        "Open a page of this site by its path, e.g. '/cart'. Other sites cannot be reached.",
        {"path": {"type": "string"}},
        ["path"],
    ),
    _tool("back", "Go back to the previous page.", {}, []),
    _tool(
        "scroll",
        "Scroll the page text up or down when it says there are more lines.",
        {"direction": {"type": "string", "enum": ["up", "down"]}},
        ["direction"],
    ),
    _tool(
        "answer",
        "Finish the task. Give the answer the task asks for in `text` (or a short note when it asks for none).",
        {"text": {"type": "string"}},
        ["text"],
    ),
]

_SPECS: dict[str, tuple[dict[str, type | tuple[type, ...]], set[str]]] = {
    "click": ({"element_id": (str, int)}, {"element_id"}),
    "type": ({"element_id": (str, int), "text": str}, {"element_id", "text"}),
    "select": ({"element_id": (str, int), "option": str}, {"element_id", "option"}),
    "check": ({"element_id": (str, int), "checked": bool}, {"element_id"}),
    "goto": ({"path": str}, {"path"}),
    "back": ({}, set()),
    "scroll": ({"direction": str}, {"direction"}),
    "answer": ({"text": str}, {"text"}),
}


class ActionError(ValueError):
    """A tool call the environment refuses; its message goes back to the agent as ``error: ...``."""


@dataclass(frozen=True)
class CheckedToolCall:
    """A validated tool call."""

    id: str
    name: str
    arguments: dict[str, Any]


def element_error(
    element_id: str, found_kind: str | None, ids: Sequence[str], kinds: Sequence[str] | None, verb: str
) -> ActionError:
    """The refusal for an element that is not on the page (``found_kind`` None) or not of ``kinds``.

    ``ids`` are the page's elements the agent could ``verb`` instead (the first 20 are listed).
    Both browser envs (the site template and MiniWoB++) refuse with these same words.
    """
    if found_kind is None:
        listed = ", ".join(ids[:20]) + (" ..." if len(ids) > 20 else "")
        named = shown(element_id)[1:-1] if len(element_id) <= 60 else shown(element_id)
        return ActionError(f"there is no element [{named}] on this page; elements you can {verb}: {listed or 'none'}")
    allowed = " or ".join(kinds or ())
    return ActionError(f"[{element_id}] is a {found_kind}; you can {verb} only a {allowed}")


def option_value(element_id: str, options: Sequence[tuple[str, str]], wanted: str) -> str:
    """The value of the ``(value, label)`` option the agent named: its exact label, else the label
    ignoring case, else its value; an :class:`ActionError` listing the labels when none matches."""
    value = next((value for value, label in options if label == wanted), None)
    if value is None:
        value = next(
            (value for value, label in options if label.casefold() == wanted.casefold() or value == wanted), None
        )
    if value is None:
        choices = ", ".join(repr(label) for _, label in options)
        raise ActionError(f"[{element_id}] has no option {shown(wanted)}; its options are {choices}")
    return value


def call_id_of(call: Any, index: int) -> str:
    """The id to answer a tool call with: its own when it is a short string, else ``call_<index>``."""
    raw = call.get("id") if isinstance(call, dict) else None
    if isinstance(raw, str) and raw and len(raw) <= LIMITS["element_id"] and _is_text(raw):
        return raw
    return f"call_{index}"


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_string(tool: str, key: str, value: str, rule: str | None = None) -> str:
    """Check one string argument; ``rule`` names the limits to apply when they differ from ``key``'s."""
    rule = rule or key
    if not _is_text(value):
        raise ActionError(
            f"{tool}: argument {key!r} is not valid text (it holds an unpaired UTF-16 surrogate); resend it as plain "
            "text"
        )
    if len(value) > LIMITS[rule]:
        raise ActionError(
            f"{tool}: argument {key!r} is {len(value)} characters long; at most {LIMITS[rule]} are accepted"
        )
    if rule == "text":
        value = value.replace("\r\n", "\n").replace("\r", "\n")  # as a browser normalises a textarea
    elif rule != "answer" and _LINE_BREAK.search(value):
        raise ActionError(f"{tool}: argument {key!r} must be one line; got {shown(value)}")
    if rule != "answer" and _CONTROL.search(value):
        raise ActionError(f"{tool}: argument {key!r} holds control characters; got {shown(value)}")
    return value


def _element_id(tool: str, value: str | int) -> str:
    if isinstance(value, int):
        if abs(value) >= 10**18:
            raise ActionError(f"{tool}: element_id is a {value.bit_length()}-bit number, not an id shown on the page")
        return str(value)
    return _check_string(tool, "element_id", value).strip()


def parse_tool_call(call: Any, index: int) -> CheckedToolCall:
    """Validate one tool call of an assistant message.

    Raises:
        ActionError: naming the problem and the expected form.
    """
    if not isinstance(call, dict):
        raise ActionError(f"tool call {index} is not an object; send {{'name': ..., 'arguments': {{...}}}}")
    call_id = call_id_of(call, index)
    name = call.get("name")
    if not isinstance(name, str) or name not in _SPECS:
        known = ", ".join(_SPECS)
        label = shown(name) if isinstance(name, str) else type(name).__name__
        raise ActionError(f"unknown tool {label}; the tools are: {known}")
    arguments = call.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ActionError(f"{name}: arguments must be a JSON object, got {type(arguments).__name__}")
    types, required = _SPECS[name]
    unknown = sorted(
        key if isinstance(key, str) and len(key) <= 30 and key.isidentifier() else shown(key, 30)
        for key in set(arguments) - set(types)
    )
    if unknown:
        listed = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        raise ActionError(f"{name}: unknown argument(s) {listed}; it takes {', '.join(types) or 'no arguments'}")
    missing = sorted(required - set(arguments))
    if missing:
        raise ActionError(f"{name}: missing argument(s) {', '.join(missing)}")
    cleaned: dict[str, Any] = {}
    for key, value in arguments.items():
        expected = types[key]
        if isinstance(value, bool) and expected is not bool:
            raise ActionError(f"{name}: argument {key!r} must be a string, got a boolean")
        if not isinstance(value, expected):
            wanted = "a boolean" if expected is bool else "a string"
            raise ActionError(f"{name}: argument {key!r} must be {wanted}, got {type(value).__name__}")
        if key == "element_id":
            cleaned[key] = _element_id(name, value)
        elif isinstance(value, str):
            cleaned[key] = _check_string(name, key, value, "answer" if name == "answer" else None)
        else:
            cleaned[key] = value
    if name == "scroll" and cleaned["direction"] not in ("up", "down"):
        raise ActionError(f"scroll: direction must be 'up' or 'down', got {shown(cleaned['direction'])}")
    if name == "check":
        cleaned.setdefault("checked", True)
    return CheckedToolCall(call_id, name, cleaned)


def check_path(path: str) -> str:
    """A ``goto`` path after the shared checks (already one line, bounded, no control characters)."""
    return path.strip()


def prepare_typed_text(element_id: str, input_type: str, text: str) -> str:
    """The value a ``type`` call puts into a field of ``input_type``, as a browser would store it.

    Raises:
        ActionError: the field cannot hold ``text`` (a line break in a one-line field, a number
            field given something that is not an HTML floating-point number).
    """
    kind = (input_type or "text").lower()
    if kind not in _MULTI_LINE and "\n" in text:
        raise ActionError(f"[{element_id}] is a one-line field; send the text without line breaks")
    if kind == "number":
        value = text.strip(_ASCII_SPACE)
        if value and not (_HTML_NUMBER.fullmatch(value) and math.isfinite(float(value))):
            raise ActionError(f"[{element_id}] takes a number written with the digits 0-9, e.g. '2'; got {shown(text)}")
        return value
    if kind in ("email", "url"):
        return text.strip(_ASCII_SPACE)
    return text
