"""The browser tools (OpenAI-style definitions) and validation of their arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["BROWSER_TOOLS", "ActionError", "ToolCall", "parse_tool_call"]


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
class ToolCall:
    """A validated tool call."""

    id: str
    name: str
    arguments: dict[str, Any]


def parse_tool_call(call: Any, index: int) -> ToolCall:
    """Validate one tool call of an assistant message.

    Raises:
        ActionError: naming the problem and the expected form.
    """
    if not isinstance(call, dict):
        raise ActionError(f"tool call {index} is not an object; send {{'name': ..., 'arguments': {{...}}}}")
    call_id = str(call.get("id") or f"call_{index}")
    name = call.get("name")
    if name not in _SPECS:
        known = ", ".join(_SPECS)
        raise ActionError(f"unknown tool {name!r}; the tools are: {known}")
    arguments = call.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ActionError(f"{name}: arguments must be a JSON object, got {type(arguments).__name__}")
    types, required = _SPECS[name]
    unknown = sorted(set(arguments) - set(types))
    if unknown:
        raise ActionError(
            f"{name}: unknown argument(s) {', '.join(unknown)}; it takes {', '.join(types) or 'no arguments'}"
        )
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
        cleaned[key] = str(value) if key == "element_id" else value
    if name == "scroll" and cleaned["direction"] not in ("up", "down"):
        raise ActionError(f"scroll: direction must be 'up' or 'down', got {cleaned['direction']!r}")
    if name == "check":
        cleaned.setdefault("checked", True)
    return ToolCall(call_id, name, cleaned)
