"""The one reader of tool-call actions: every common shape in, the protocol's message out.

An env that offers tools receives its action through :func:`normalize_tool_action` before
it reads any call, so every env accepts the same shapes (see ``docs/explanation/chat-envs.md``):

* a message: ``{"role": "assistant", "content": ..., "tool_calls": [CALL, ...]}`` (one
  call not in a list is one call);
* Anthropic's message: ``{"role": "assistant", "content": [{"type": "text", ...},
  {"type": "tool_use", "id", "name", "input"}, ...]}``;
* one call, or a list of calls, sent without a message;

where a CALL is any of

* OpenAI's ``{"id"?, "type": "function", "function": {"name", "arguments"}}``;
* ``{"id"?, "name", "arguments"}`` (the protocol's :class:`~rolloutgym_protocol.types.ToolCall`);
* ``{"id"?, "name", "parameters"}``;
* Anthropic's ``{"type": "tool_use", "id"?, "name", "input"}``;

and ``arguments`` is a JSON object, or JSON text of one (what the OpenAI SDKs send; empty
text is ``{}``). The result is the protocol's message, each call
``{"id", "name", "arguments"}`` with ``arguments`` a dict. What cannot be read is handed
on unchanged, so the env answers it with its own error; :data:`TOOL_CALL_SHAPES` is the
sentence such errors end with. Nothing here raises.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["TOOL_CALL_SHAPES", "normalize_tool_action", "read_tool_call", "shape_error"]

TOOL_CALL_SHAPES = (
    'a tool call is {"name": NAME, "arguments": {...}} (also "parameters"), OpenAI\'s '
    '{"type": "function", "function": {"name": NAME, "arguments": "<JSON object>"}} or Anthropic\'s '
    '{"type": "tool_use", "name": NAME, "input": {...}}, sent in an assistant message\'s "tool_calls" '
    "(or alone, or as a list)"
)

_ARGUMENT_KEYS = ("arguments", "parameters", "input")


def shape_error(problem: str) -> str:
    """``problem`` followed by the accepted shapes (the text of an env's error for a malformed call)."""
    return f"{problem}; {TOOL_CALL_SHAPES}"


def _arguments(value: Any) -> Any:
    """Arguments as a dict when they are one or JSON text of one; anything else unchanged."""
    if value is None:
        return {}
    if isinstance(value, (str, bytes, bytearray)):
        text = value.decode("utf-8", "replace") if not isinstance(value, str) else value
        if not text.strip():
            return {}
        try:
            decoded = json.loads(text)
        except (ValueError, RecursionError):
            return value
        return decoded if isinstance(decoded, dict) else value
    return value


def _is_call(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    if isinstance(value.get("function"), Mapping):
        return True
    return isinstance(value.get("name"), str) and "role" not in value and "content" not in value


def read_tool_call(call: Any, position: int = 0) -> dict[str, Any] | None:
    """One call of any accepted shape as ``{"id", "name", "arguments"}``; ``None`` when it is none of them."""
    if not isinstance(call, Mapping):
        return None
    body: Mapping[str, Any] = call["function"] if isinstance(call.get("function"), Mapping) else call
    name = body.get("name")
    if not isinstance(name, str):
        return None
    raw: Any = None
    for key in _ARGUMENT_KEYS:
        if key in body:
            raw = body[key]
            break
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = f"call_{position}"
    return {"id": call_id, "name": name, "arguments": _arguments(raw)}


def _calls(values: Any) -> list[Any]:
    """Each value read as a call when it is one; others are kept as sent (the env reports them)."""
    calls = []
    for position, value in enumerate(values):
        read = read_tool_call(value, position)
        calls.append(read if read is not None else value)
    return calls


def _from_content_blocks(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """An Anthropic message (``content`` blocks with ``tool_use``) as the protocol's message."""
    blocks = message.get("content")
    if not isinstance(blocks, list) or not any(
        isinstance(block, Mapping) and block.get("type") == "tool_use" for block in blocks
    ):
        return None
    texts = [
        block["text"]
        for block in blocks
        if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    uses = [block for block in blocks if isinstance(block, Mapping) and block.get("type") == "tool_use"]
    earlier = message.get("tool_calls")
    calls = _calls(earlier if isinstance(earlier, list) else []) + _calls(uses)
    rest = {key: value for key, value in message.items() if key not in ("content", "tool_calls")}
    return {**rest, "role": message.get("role", "assistant"), "content": "\n".join(texts), "tool_calls": calls}


def normalize_tool_action(action: Any) -> Any:
    """``action`` in the protocol's message shape when it carries tool calls in any accepted shape.

    Plain text, a message without calls and anything unreadable come back unchanged.
    """
    if isinstance(action, list):
        if action and all(_is_call(value) or _is_tool_use(value) for value in action):
            return {"role": "assistant", "content": "", "tool_calls": _calls(action)}
        return action
    if not isinstance(action, Mapping):
        return action
    if _is_call(action) or _is_tool_use(action):
        return {"role": "assistant", "content": "", "tool_calls": _calls([action])}
    anthropic = _from_content_blocks(action)
    if anthropic is not None:
        return anthropic
    calls = action.get("tool_calls")
    if isinstance(calls, Mapping):
        calls = [calls]
    if not isinstance(calls, list) or not calls:
        return action
    return {**action, "tool_calls": _calls(calls)}


def _is_tool_use(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "tool_use" and isinstance(value.get("name"), str)
