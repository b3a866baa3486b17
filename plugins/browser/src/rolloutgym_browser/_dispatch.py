"""The one loop that runs an assistant message's tool calls, shared by both browser envs.

``browser/shop-v0`` (and the ``browser`` template) and ``browser/miniwob-v0`` answer a message
the same way: each call gets one ``tool`` message (its own id when it is a short string, else
``call_<index>``), the calls past :data:`MAX_CALLS_PER_MESSAGE` and every refused call are
invalid actions answered with ``error: ...``, an ``answer`` call ends the episode at once, and
the page text is added to the last tool message. What differs is passed in: how a call is
validated and run, and (MiniWoB) whether the page ended the episode by itself after a call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ._actions import MAX_CALLS_PER_MESSAGE, ActionError, CheckedToolCall, call_id_of

__all__ = ["Dispatched", "dispatch_tool_calls", "tool_calls_of", "with_page"]


@dataclass
class Dispatched:
    """What running one message's tool calls gave.

    Attributes:
        messages: one ``tool`` message per call answered.
        invalid: how many calls were refused.
        answer: the ``answer`` call that ended the episode (None: no call did).
        page_ended: the page ended the episode after a call (the later calls were not run).
    """

    messages: list[dict[str, Any]] = field(default_factory=list)
    invalid: int = 0
    answer: CheckedToolCall | None = None
    page_ended: bool = False


def tool_calls_of(action: Any) -> list[Any] | None:
    """The tool calls of an assistant message (one sent bare is still one); None when it has none."""
    calls = action.get("tool_calls") if isinstance(action, dict) else None
    if not calls:
        return None
    return calls if isinstance(calls, list) else [calls]


async def dispatch_tool_calls(
    calls: list[Any],
    *,
    parse: Callable[[Any, int], CheckedToolCall],
    execute: Callable[[CheckedToolCall], Awaitable[str]],
    answer_reply: str,
    page_done: Callable[[], Awaitable[bool]] | None = None,
    log: list[dict[str, Any]] | None = None,
) -> Dispatched:
    """Run ``calls`` in order, each validated by ``parse`` and run by ``execute``.

    Args:
        calls: the message's tool calls, as sent.
        parse: ``parse(raw, index)`` validates one call (raises :class:`ActionError`).
        execute: runs a validated call, returns its result text (raises :class:`ActionError`).
        answer_reply: the tool message that answers an ``answer`` call.
        page_done: asked after every call; True ends the episode (the later calls are answered
            "not run").
        log: when given, gets ``{"name", "arguments", "result", "error"}`` for every call.
    """
    outcome = Dispatched()
    for index, raw in enumerate(calls):
        call_id = call_id_of(raw, index)
        record: dict[str, Any] | None = None
        if log is not None:
            record = {
                "name": raw.get("name") if isinstance(raw, dict) else None,
                "arguments": raw.get("arguments") if isinstance(raw, dict) else raw,
                "result": None,
                "error": None,
            }
            log.append(record)
        try:
            if index >= MAX_CALLS_PER_MESSAGE:
                raise ActionError(
                    f"too many tool calls in one message (at most {MAX_CALLS_PER_MESSAGE}); this one was not run"
                )
            call = parse(raw, index)
            if call.name == "answer":
                if record is not None:
                    record["result"] = "answer recorded"
                outcome.messages.append({"role": "tool", "tool_call_id": call.id, "content": answer_reply})
                outcome.answer = call
                return outcome
            result = await execute(call)
            if record is not None:
                record["result"] = result
        except ActionError as exc:
            outcome.invalid += 1
            result = f"error: {exc}"
            if record is not None:
                record["error"] = str(exc)
        outcome.messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        if page_done is not None and await page_done():
            for later_index, later in enumerate(calls[index + 1 :], start=index + 1):
                outcome.messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id_of(later, later_index),
                        "content": "not run: the task page ended the episode",
                    }
                )
            outcome.page_ended = True
            return outcome
    return outcome


def with_page(text: str, page: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """``text`` followed by the page: one string, or the page's parts (text first, then its image)."""
    if isinstance(page, str):
        return f"{text}\n\n{page}"
    return [{"type": "text", "text": f"{text}\n\n{page[0]['text']}"}, *page[1:]]
