"""Chat messages between environments and model backends.

rolloutgym's own message shape (the chat-environment convention) puts tool calls as
``{"id", "name", "arguments": {...}}``; the OpenAI wire shape nests them under
``function`` with JSON-string arguments. These helpers convert between the two and turn
any observation into the list of messages a model should see.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol import find_attribute
from rolloutgym_protocol.display import json_text, safe_repr, safe_str
from rolloutgym_protocol.errors import json_error_text

__all__ = [
    "content_text",
    "env_tools",
    "from_openai_message",
    "observation_messages",
    "to_openai_messages",
    "tool_names",
]


def _json_problem(error: ValueError) -> str:
    """What is wrong with JSON text: the decoder's message, or that a number has too many digits."""
    return error.msg if isinstance(error, json.JSONDecodeError) else json_error_text(error)


def content_text(content: Any) -> str:
    """The text of a message's ``content`` (a string or a list of typed parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        pieces = []
        for part in content:
            if isinstance(part, Mapping):
                if part.get("type") == "text":
                    pieces.append(safe_str(part.get("text", "")))
                else:
                    pieces.append(f"[{part.get('type', 'part')}]")
            else:
                pieces.append(safe_str(part))
        return "".join(pieces)
    return json_text(content, default=safe_repr)


def observation_messages(observation: Any) -> list[dict[str, Any]]:
    """The chat messages an observation adds to the conversation.

    A list of messages (the chat-environment convention) is used as is (copied); a
    string becomes a user message; a single message dict is wrapped in a list; anything
    else is shown to the model as JSON in a user message.
    """
    if isinstance(observation, str):
        return [{"role": "user", "content": observation}]
    if isinstance(observation, Mapping) and "role" in observation:
        return [dict(observation)]
    if isinstance(observation, list) and all(isinstance(item, Mapping) and "role" in item for item in observation):
        return [dict(item) for item in observation]
    return [{"role": "user", "content": json_text(observation, default=safe_repr)}]


def env_tools(environment: Any) -> list[dict[str, Any]]:
    """The OpenAI-style tool definitions an environment exposes (``env.tools``), or ``[]``."""
    tools = find_attribute(environment, "tools")
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        return []
    return [dict(tool) for tool in tools if isinstance(tool, Mapping)]


def tool_names(tools: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The function names of OpenAI-style tool definitions."""
    names = set()
    for tool in tools:
        function = tool.get("function", tool)
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return frozenset(names)


def to_openai_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Convert rolloutgym messages to the OpenAI Chat Completions wire shape.

    Tool calls become ``{"id", "type": "function", "function": {"name", "arguments": JSON
    string}}``; content parts are flattened to text; other keys are kept.
    """
    converted = []
    for message in messages:
        item: dict[str, Any] = {"role": message["role"], "content": content_text(message.get("content"))}
        for key in ("tool_call_id", "name"):
            if key in message:
                item[key] = message[key]
        calls = message.get("tool_calls")
        if calls:
            item["tool_calls"] = [
                {
                    "id": call.get("id") or f"call_{index}",
                    "type": "function",
                    "function": {
                        "name": call.get("name", ""),
                        "arguments": json_text(call.get("arguments", {})),
                    },
                }
                for index, call in enumerate(calls)
            ]
        converted.append(item)
    return converted


def from_openai_message(
    message: Mapping[str, Any], *, call_id_prefix: str = "call"
) -> tuple[dict[str, Any], list[str]]:
    """Convert an OpenAI-style assistant message to a rolloutgym action message.

    Accepts both wire-shaped tool calls (``function.arguments`` as a JSON string) and
    rolloutgym-shaped ones. Arguments that are not a JSON object are replaced by ``{}``
    (the environment then answers with a tool error) and reported.

    Returns:
        ``(message, problems)``: the action message and a list of problems found
        (empty when every tool call was well-formed).
    """
    problems: list[str] = []
    action: dict[str, Any] = {"role": "assistant", "content": content_text(message.get("content"))}
    calls = message.get("tool_calls") or []
    parsed_calls = []
    for index, call in enumerate(calls):
        if not isinstance(call, Mapping):
            problems.append(f"tool call {index} is not an object")
            continue
        nested = call.get("function")
        function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else call
        name = function.get("name")
        raw = function.get("arguments", {})
        arguments: Any = raw
        if isinstance(raw, str):
            try:
                arguments = json.loads(raw) if raw.strip() else {}
            except ValueError as exc:  # also a number past Python's digit limit
                problems.append(f"tool call {index} ({name}): arguments are not valid JSON ({_json_problem(exc)})")
                arguments = {}
        if not isinstance(arguments, dict):
            problems.append(f"tool call {index} ({name}): arguments must be a JSON object")
            arguments = {}
        if not isinstance(name, str) or not name:
            problems.append(f"tool call {index} has no function name")
            name = "unnamed_tool_call"
        call_id = call.get("id")
        parsed_calls.append(
            {
                "id": call_id if isinstance(call_id, str) and call_id else f"{call_id_prefix}_{index}",
                "name": name,
                "arguments": arguments,
            }
        )
    if parsed_calls:
        action["tool_calls"] = parsed_calls
    return action, problems
