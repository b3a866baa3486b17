"""Translate the three wire formats a harness may speak to rolloutgym messages and back.

Requests: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages become
``(messages, tools, requested)`` in rolloutgym's shape (``tool_calls: [{"id", "name",
"arguments": {...}}]``, tool results ``{"role": "tool", "tool_call_id", "content"}``, tools
as OpenAI function definitions). Replies: one :class:`Reply` becomes each format's body.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym.llm.messages import content_text, from_openai_message
from rolloutgym_protocol.errors import ConfigError

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
    return Request("chat.completions", str(body.get("model", "")), messages, tools, requested, bool(body.get("stream")))


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
                "name": item.get("name", ""),
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
    tools = [_function_tool(tool) for tool in body.get("tools") or [] if tool.get("type") == "function"]
    requested = _sampling(body, ("max_output_tokens",), "stop")
    return Request("responses", str(body.get("model", "")), messages, tools, requested, bool(body.get("stream")))


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
    return Request("messages", str(body.get("model", "")), messages, tools, requested, bool(body.get("stream")))


def _ident(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _wire_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": call["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}), ensure_ascii=False)},
        }
        for call in reply.tool_calls
    ]


def _finish(reply: Reply) -> str:
    if reply.stop_reason == "length":
        return "length"
    return "tool_calls" if reply.tool_calls else "stop"


def _logprobs(reply: Reply) -> dict[str, Any] | None:
    if reply.logprobs is None:
        return None
    texts = reply.tokens_text or tuple("" for _ in reply.logprobs)
    return {
        "content": [
            {"token": text, "logprob": value, "bytes": None, "top_logprobs": []}
            for text, value in zip(texts, reply.logprobs, strict=True)
        ]
    }


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }


def chat_body(reply: Reply, model: str) -> dict[str, Any]:
    """A ``chat.completion`` object (plus ``prompt_token_ids``/``token_ids``, as vLLM returns them)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = _wire_calls(reply)
    choice = {"index": 0, "message": message, "finish_reason": _finish(reply), "logprobs": _logprobs(reply)}
    if reply.token_ids is not None:
        choice["token_ids"] = list(reply.token_ids)
    body = {
        "id": _ident("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": _usage(reply),
    }
    if reply.prompt_token_ids is not None:
        body["prompt_token_ids"] = list(reply.prompt_token_ids)
    return body


def chat_chunks(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed reply (the text in one delta)."""
    ident, created = _ident("chatcmpl-"), int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, **extra}
        return {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [choice]}

    yield chunk({"role": "assistant", "content": ""})
    if reply.content:
        yield chunk({"content": reply.content}, logprobs=_logprobs(reply))
    for index, call in enumerate(_wire_calls(reply)):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    last = chunk({}, _finish(reply))
    last["usage"] = _usage(reply)
    yield last


def responses_body(reply: Reply, model: str) -> dict[str, Any]:
    """A ``response`` object of the OpenAI Responses API."""
    output: list[dict[str, Any]] = []
    if reply.content or not reply.tool_calls:
        text = {"type": "output_text", "text": reply.content, "annotations": []}
        if reply.logprobs is not None:
            text["logprobs"] = _logprobs(reply)["content"]  # type: ignore[index]
        output.append(
            {"type": "message", "id": _ident("msg_"), "status": "completed", "role": "assistant", "content": [text]}
        )
    for call in reply.tool_calls:
        output.append(
            {
                "type": "function_call",
                "id": _ident("fc_"),
                "call_id": call["id"],
                "name": call["name"],
                "arguments": json.dumps(call.get("arguments", {}), ensure_ascii=False),
                "status": "completed",
            }
        )
    incomplete = reply.stop_reason == "length"
    return {
        "id": _ident("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": reply.prompt_tokens,
            "output_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def anthropic_body(reply: Reply, model: str) -> dict[str, Any]:
    """An Anthropic ``message`` object."""
    content: list[dict[str, Any]] = []
    if reply.content or not reply.tool_calls:
        content.append({"type": "text", "text": reply.content})
    for call in reply.tool_calls:
        content.append({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call.get("arguments", {})})
    if reply.stop_reason == "length":
        stop = "max_tokens"
    else:
        stop = "tool_use" if reply.tool_calls else "end_turn"
    return {
        "id": _ident("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": reply.completion_tokens},
    }


def anthropic_events(reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events of a streamed Anthropic reply."""
    body = anthropic_body(reply, model)
    start = {
        **body,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": 0},
    }
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            empty = {**block, "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"], ensure_ascii=False)}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    final = {"stop_reason": body["stop_reason"], "stop_sequence": None}
    yield (
        "message_delta",
        {"type": "message_delta", "delta": final, "usage": {"output_tokens": reply.completion_tokens}},
    )
    yield "message_stop", {"type": "message_stop"}
