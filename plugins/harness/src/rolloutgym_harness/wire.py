"""Translate the three wire formats a harness may speak to rolloutgym messages and back.

Requests: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages become
``(messages, tools, requested)`` in rolloutgym's shape (``tool_calls: [{"id", "name",
"arguments": {...}}]``, tool results ``{"role": "tool", "tool_call_id", "content"}``, tools
as OpenAI function definitions). Replies: one :class:`Reply` becomes each format's body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym.llm.messages import content_text, from_openai_message
from rolloutgym_protocol.errors import ConfigError

from ._options import CallOptions, call_options

__all__ = ["Refused", "Reply", "Request", "parse_anthropic", "parse_chat", "parse_responses"]


class Refused(Exception):
    """A call the endpoint answers with an HTTP error (``status``) instead of sampling."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Request:
    """A model call in rolloutgym's shape."""

    api: str
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    requested: dict[str, Any]  # sampling parameters as the harness asked for them
    stream: bool = False
    options: CallOptions = field(default_factory=CallOptions)
    namespaced: dict[str, tuple[str, str]] = field(default_factory=dict)  # Responses namespace tools


@dataclass
class Reply:
    """What the model answered, in rolloutgym's shape."""

    content: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "stop"  # stop | length
    prompt_tokens: int = 0
    completion_tokens: int = 0
    token_ids: tuple[int, ...] | None = None
    prompt_token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    tokens_text: tuple[str, ...] | None = None
    # tool calls the model wrote that did not parse or were cut by the length limit: handed to
    # the harness as text (``content``), never as calls; what was wrong with each
    problems: tuple[str, ...] = ()
    id: str = ""  # the response id (a Responses API reply: previous_response_id names it)


def _sampling(body: Mapping[str, Any], max_key: Sequence[str], stop_key: str) -> dict[str, Any]:
    requested: dict[str, Any] = {}
    for key in max_key:
        if body.get(key) is not None:
            requested["max_tokens"] = int(body[key])
            break
    for key in ("temperature", "top_p", "seed"):
        if body.get(key) is not None:
            requested[key] = body[key]
    stop = body.get(stop_key)
    if stop:
        requested["stop"] = [stop] if isinstance(stop, str) else list(stop)
    return requested


def _function_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool.get("function", tool)
    return {
        "type": "function",
        "function": {
            "name": function.get("name", ""),
            "description": function.get("description", ""),
            "parameters": function.get("parameters") or function.get("input_schema") or {"type": "object"},
        },
    }


def _names(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    return [tool["function"]["name"] for tool in tools]


def parse_chat(body: Mapping[str, Any]) -> Request:
    """An OpenAI Chat Completions request body."""
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ConfigError("chat.completions: 'messages' must be a non-empty list")
    messages: list[dict[str, Any]] = []
    for message in raw:
        role = message.get("role")
        if role == "developer":
            role = "system"
        if role == "assistant":
            converted, _ = from_openai_message(message)
            messages.append(converted)
        elif role == "tool":
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": message.get("tool_call_id", ""),
                    "content": content_text(message.get("content")),
                }
            )
        else:
            messages.append({"role": role, "content": content_text(message.get("content"))})
    tools = [_function_tool(tool) for tool in body.get("tools") or [] if tool.get("type", "function") == "function"]
    requested = _sampling(body, ("max_completion_tokens", "max_tokens"), "stop")
    options = call_options("chat.completions", body, _names(tools))
    model = str(body.get("model", ""))
    return Request("chat.completions", model, messages, tools, requested, bool(body.get("stream")), options)


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    try:
        parsed = json.loads(value or "{}")
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _response_items(items: Sequence[Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {
                "id": item.get("call_id", ""),
                "name": flat_name(item.get("namespace"), item.get("name", "")),
                "arguments": _arguments(item.get("arguments")),
            }
            if messages and messages[-1]["role"] == "assistant" and "_open" in messages[-1]:
                messages[-1].setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": "", "tool_calls": [call], "_open": True})
        elif kind == "function_call_output":
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id", ""), "content": content_text(item.get("output"))}
            )
        elif kind == "message":
            role = "system" if item.get("role") == "developer" else item.get("role", "user")
            content = item.get("content")
            if isinstance(content, list):
                content = "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
            entry: dict[str, Any] = {"role": role, "content": content_text(content)}
            if role == "assistant":
                entry["_open"] = True
            messages.append(entry)
    for message in messages:
        message.pop("_open", None)
    return messages


def flat_name(namespace: Any, name: str) -> str:
    """The name the model sees for a function of a Responses ``namespace`` tool (``mcp__env`` +
    ``submit`` -> ``mcp__env__submit``)."""
    return f"{namespace}__{name}" if isinstance(namespace, str) and namespace else name


def _responses_tools(raw: Sequence[Any]) -> tuple[list[dict[str, Any]], dict[str, tuple[str, str]]]:
    """Function tools, those of ``namespace`` tools (Codex's MCP servers) flattened; the flat
    names of namespaced functions -> ``(namespace, name)``, to answer calls in their namespace."""
    tools: list[dict[str, Any]] = []
    namespaced: dict[str, tuple[str, str]] = {}
    for tool in raw:
        if tool.get("type") == "function":
            tools.append(_function_tool(tool))
        elif tool.get("type") == "namespace" and isinstance(tool.get("name"), str):
            for inner in tool.get("tools") or []:
                if isinstance(inner, Mapping) and inner.get("type", "function") == "function":
                    flat = flat_name(tool["name"], str(inner.get("name", "")))
                    tools.append(_function_tool({**inner, "name": flat}))
                    namespaced[flat] = (tool["name"], str(inner.get("name", "")))
    return tools, namespaced


def parse_responses(body: Mapping[str, Any]) -> Request:
    """An OpenAI Responses request body (``input`` a string or a list of items)."""
    raw = body.get("input")
    if isinstance(raw, str):
        messages = [{"role": "user", "content": raw}]
    elif isinstance(raw, list) and raw:
        messages = _response_items(raw)
    else:
        raise ConfigError("responses: 'input' must be a string or a non-empty list of items")
    if body.get("instructions"):
        messages.insert(0, {"role": "system", "content": str(body["instructions"])})
    tools, namespaced = _responses_tools(body.get("tools") or [])
    requested = _sampling(body, ("max_output_tokens",), "stop")
    options = call_options("responses", body, _names(tools))
    model = str(body.get("model", ""))
    return Request("responses", model, messages, tools, requested, bool(body.get("stream")), options, namespaced)


def _anthropic_message(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    role = message.get("role", "user")
    content = message.get("content")
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(
                {"id": block.get("id", ""), "name": block.get("name", ""), "arguments": dict(block.get("input") or {})}
            )
        elif kind == "tool_result":
            results.append(
                {
                    "role": "tool",
                    "tool_call_id": block.get("tool_use_id", ""),
                    "content": content_text(block.get("content")),
                }
            )
    out: list[dict[str, Any]] = list(results)
    if texts or calls or not results:
        entry: dict[str, Any] = {"role": role, "content": "".join(texts)}
        if calls:
            entry["tool_calls"] = calls
        out.append(entry)
    return out


def parse_anthropic(body: Mapping[str, Any]) -> Request:
    """An Anthropic Messages request body."""
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ConfigError("messages: 'messages' must be a non-empty list")
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": content_text(system)})
    for message in raw:
        messages.extend(_anthropic_message(message))
    tools = [_function_tool(tool) for tool in body.get("tools") or [] if "name" in tool]
    requested = _sampling(body, ("max_tokens",), "stop_sequences")
    options = call_options("messages", body, _names(tools))
    return Request(
        "messages", str(body.get("model", "")), messages, tools, requested, bool(body.get("stream")), options
    )
