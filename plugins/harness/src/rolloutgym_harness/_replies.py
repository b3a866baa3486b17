"""Replies in each wire format: a chat completion (one choice per sample of ``n``) and its
stream chunks, a Responses API ``response`` and its events, an Anthropic ``message`` and its
events. A :class:`~rolloutgym_harness.wire.Reply` never carries a tool call that did not parse
(the endpoint hands such a call out as text), so every call here is complete."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .wire import Reply

__all__ = [
    "anthropic_body",
    "anthropic_events",
    "chat_body",
    "chat_chunks",
    "new_id",
    "responses_body",
    "responses_events",
]


def new_id(prefix: str) -> str:
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


def _usage(replies: Sequence[Reply]) -> dict[str, int]:
    prompt = replies[0].prompt_tokens
    completion = sum(reply.completion_tokens for reply in replies)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def chat_body(replies: Sequence[Reply], model: str) -> dict[str, Any]:
    """A ``chat.completion`` object, one choice per reply (plus ``prompt_token_ids``/``token_ids``,
    as vLLM returns them)."""
    choices = []
    for index, reply in enumerate(replies):
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = _wire_calls(reply)
        choice = {"index": index, "message": message, "finish_reason": _finish(reply), "logprobs": _logprobs(reply)}
        if reply.token_ids is not None:
            choice["token_ids"] = list(reply.token_ids)
        choices.append(choice)
    body = {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": _usage(replies),
    }
    if replies[0].prompt_token_ids is not None:
        body["prompt_token_ids"] = list(replies[0].prompt_token_ids)
    return body


def chat_chunks(replies: Sequence[Reply], model: str) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed reply (each choice's text in one delta)."""
    ident, created = new_id("chatcmpl-"), int(time.time())

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": index, "delta": delta, "finish_reason": finish, **extra}
        return {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [choice]}

    for index, reply in enumerate(replies):
        yield chunk(index, {"role": "assistant", "content": ""})
        if reply.content:
            yield chunk(index, {"content": reply.content}, logprobs=_logprobs(reply))
        for position, call in enumerate(_wire_calls(reply)):
            yield chunk(index, {"tool_calls": [{"index": position, **call}]})
        last = chunk(index, {}, _finish(reply))
        if index == len(replies) - 1:
            last["usage"] = _usage(replies)
        yield last


def _response_output(reply: Reply, namespaced: Mapping[str, tuple[str, str]]) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if reply.content or not reply.tool_calls:
        text = {"type": "output_text", "text": reply.content, "annotations": []}
        if reply.logprobs is not None:
            text["logprobs"] = _logprobs(reply)["content"]  # type: ignore[index]
        output.append(
            {"type": "message", "id": new_id("msg_"), "status": "completed", "role": "assistant", "content": [text]}
        )
    for call in reply.tool_calls:
        item = {
            "type": "function_call",
            "id": new_id("fc_"),
            "call_id": call["id"],
            "name": call["name"],
            "arguments": json.dumps(call.get("arguments", {}), ensure_ascii=False),
            "status": "completed",
        }
        if call["name"] in namespaced:  # a function of a namespace tool: answered in its namespace
            item["namespace"], item["name"] = namespaced[call["name"]]
        output.append(item)
    return output


def responses_body(
    reply: Reply,
    model: str,
    *,
    store: bool = True,
    previous: str | None = None,
    namespaced: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """A ``response`` object of the OpenAI Responses API (status ``incomplete`` when cut)."""
    incomplete = reply.stop_reason == "length"
    return {
        "id": reply.id or new_id("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "output": _response_output(reply, namespaced or {}),
        "parallel_tool_calls": True,
        "previous_response_id": previous,
        "store": store,
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


def _item_events(index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if item["type"] == "message":
        part = item["content"][0]
        yield {"type": "response.output_item.added", "output_index": index, "item": {**item, "content": []}}
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        yield {"type": "response.content_part.added", **where, "part": {**part, "text": ""}}
        yield {"type": "response.output_text.delta", **where, "delta": part["text"], "logprobs": []}
        yield {"type": "response.output_text.done", **where, "text": part["text"], "logprobs": []}
        yield {"type": "response.content_part.done", **where, "part": part}
    else:
        yield {"type": "response.output_item.added", "output_index": index, "item": {**item, "arguments": ""}}
        where = {"item_id": item["id"], "output_index": index}
        yield {"type": "response.function_call_arguments.delta", **where, "delta": item["arguments"]}
        yield {"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]}
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


def responses_events(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The server-sent events of a streamed Responses API reply, ``sequence_number`` in order."""
    start = {**body, "status": "in_progress", "output": [], "incomplete_details": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for index, item in enumerate(body["output"]):
        events.extend(_item_events(index, item))
    final = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    events.append({"type": final, "response": body})
    for number, event in enumerate(events):
        yield {**event, "sequence_number": number}


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
        "id": new_id("msg_"),
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
