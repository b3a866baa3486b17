"""Reading an agent's message the way both tool-calling code envs do (:class:`~rolloutgym_code.envs.CodeEditingEnv`
and :class:`~rolloutgym_code.harbor.HarborTaskEnv`): a bare string is the assistant's text, the
tool calls are a list (one sent bare is one), and each call gives its id, name and arguments."""

from __future__ import annotations

import json
from typing import Any

from rolloutgym_protocol.toolcalls import normalize_tool_action

__all__ = ["as_message", "read_call", "tool_calls_of"]


def as_message(action: Any) -> Any:
    """``action``, a bare string taken as the assistant's text; tool calls of any shape read as the protocol's."""
    if isinstance(action, str):
        return {"role": "assistant", "content": action}
    return normalize_tool_action(action)


def tool_calls_of(message: Any) -> list[Any] | None:
    """The message's tool calls as a list; None when it has none."""
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not calls:
        return None
    return calls if isinstance(calls, list) else [calls]  # each non-dict entry reads as no name (an unknown tool)


def read_call(call: Any) -> tuple[str, Any, Any]:
    """``(call_id, name, arguments)`` of one call; arguments sent as JSON text are decoded when they parse."""
    call_id = str(call.get("id", "call")) if isinstance(call, dict) else "call"
    name = call.get("name") if isinstance(call, dict) else None
    arguments = call.get("arguments") if isinstance(call, dict) else None
    if isinstance(arguments, str):  # tolerate JSON-encoded arguments
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            pass
    return call_id, name, arguments
