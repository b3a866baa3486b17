"""The MiniWoB++ tools: the browser plugin's shared ones (no ``goto``/``back``) plus ``click_at``,
``drag`` and ``press_key``, and the validation of those three (the others pass the shared one)."""

from __future__ import annotations

import math
import re
from typing import Any

from rolloutgym_protocol.display import int_text, safe_str

from ._actions import BROWSER_TOOLS, ActionError, CheckedToolCall, call_id_of, parse_tool_call, shown

__all__ = ["MINIWOB_TOOLS", "parse_miniwob_call"]


_SHARED = ("click", "type", "select", "check", "scroll", "answer")
_NUMBER = {"type": "number"}


MINIWOB_TOOLS: list[dict[str, Any]] = (
    [tool for tool in BROWSER_TOOLS if tool["function"]["name"] in _SHARED and tool["function"]["name"] != "answer"]
    + [
        {
            "type": "function",
            "function": {
                "name": "click_at",
                "description": "Click the page at a position in CSS pixels from its top-left corner (positions are "
                "shown as @(x,y)).",
                "parameters": {
                    "type": "object",
                    "properties": {"x": _NUMBER, "y": _NUMBER},
                    "required": ["x", "y"],
                    "additionalProperties": False,
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "drag",
                "description": "Press the mouse at (from_x, from_y), move it to (to_x, to_y) and release it.",
                "parameters": {
                    "type": "object",
                    "properties": {"from_x": _NUMBER, "from_y": _NUMBER, "to_x": _NUMBER, "to_y": _NUMBER},
                    "required": ["from_x", "from_y", "to_x", "to_y"],
                    "additionalProperties": False,
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "press_key",
                "description": "Press a key or a combination on the focused element, e.g. 'Enter', 'Tab', "
                "'ArrowDown', 'Control+C'.",
                "parameters": {
                    "type": "object",
                    "properties": {"key": {"type": "string"}},
                    "required": ["key"],
                    "additionalProperties": False,
                },
            },
        },
    ]
    + [tool for tool in BROWSER_TOOLS if tool["function"]["name"] == "answer"]
)


# Playwright key names: a letter/digit/symbol or a named key, with optional modifiers.
_KEY = re.compile(
    r"^(?:(?:Control|Shift|Alt|Meta|ControlOrMeta)\+){0,3}"
    r"(?:[!-~]|F(?:[1-9]|1[0-2])|Enter|Tab|Backspace|Delete|Escape|Space|Home|End|PageUp|PageDown|Insert|"
    r"Arrow(?:Up|Down|Left|Right))$"
)


_MINIWOB_SPECS = {
    "click_at": ("x", "y"),
    "drag": ("from_x", "from_y", "to_x", "to_y"),
    "press_key": ("key",),
}


# The page's layout area: positions outside it are refused (they would click nothing).
_MAX_X, _MAX_Y = 1024, 768


_INFINITE = (math.inf, -math.inf)


def parse_miniwob_call(raw: Any, index: int) -> CheckedToolCall:
    """Validate a ``click_at``/``drag``/``press_key`` call (other tools: the shared validation)."""
    name = raw.get("name") if isinstance(raw, dict) else None
    if not isinstance(name, str) or name not in _MINIWOB_SPECS:
        if name in ("goto", "back"):
            raise ActionError(f"{name}: a MiniWoB task is a single page; there is nowhere else to go")
        call = parse_tool_call(raw, index)
        if call.name not in _SHARED:  # pragma: no cover - goto/back are answered above
            raise ActionError(f"unknown tool {call.name!r}")
        return call
    arguments = raw.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise ActionError(f"{name}: arguments must be a JSON object, got {type(arguments).__name__}")
    wanted = _MINIWOB_SPECS[name]
    unknown = sorted(safe_str(key)[:30] for key in set(arguments) - set(wanted))
    if unknown:
        raise ActionError(f"{name}: unknown argument(s) {', '.join(unknown[:5])}; it takes {', '.join(wanted)}")
    missing = [key for key in wanted if key not in arguments]
    if missing:
        raise ActionError(f"{name}: missing argument(s) {', '.join(missing)}")
    cleaned: dict[str, Any] = {}
    if name == "press_key":
        key = arguments["key"]
        if not isinstance(key, str) or len(key) > 40 or not _KEY.fullmatch(key):
            raise ActionError(
                f"press_key: {shown(safe_str(key), 40)} is not a key; send a key name such as 'Enter', 'Tab', "
                "'ArrowDown', 'a' or a combination such as 'Control+A'"
            )
        cleaned["key"] = key
    else:
        for key in wanted:
            value = arguments[key]
            # No math.isfinite() or :g of an int: an int past the float range cannot be converted.
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in _INFINITE:
                raise ActionError(f"{name}: {key} must be a number of pixels, got {shown(safe_str(value), 30)}")
            limit = _MAX_X if key.endswith("x") else _MAX_Y
            if not 0 <= value <= limit:
                shown_value = int_text(value) if isinstance(value, int) else f"{value:g}"
                raise ActionError(f"{name}: {key}={shown_value} is outside the page (0-{limit})")
            cleaned[key] = float(value)
    return CheckedToolCall(call_id_of(raw, index), name, cleaned)
