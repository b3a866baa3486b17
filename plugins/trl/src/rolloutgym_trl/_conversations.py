"""Trajectories of a run file as token sequences, rendered the way the ``hf`` policy renders them.

A conversation ``[prompt..., assistant, env replies..., assistant, ...]`` becomes:

* ``prompt_ids``: :meth:`ChatTemplateRenderer.render_prompt` of the messages before the
  first assistant turn, with the env's tools (exactly the first prompt the policy sees);
* ``completion_ids``: each assistant turn as the model would write it (text, then Hermes
  ``<tool_call>`` blocks, then the end-of-turn token), followed by
  :meth:`ChatTemplateRenderer.render_continuation` of the env's replies;
* ``completion_mask``: 1 on the assistant's tokens, 0 on the env's.

So a model fine-tuned on these sequences sees at evaluation time (``--policy hf:OUT``)
the same tokens it was trained on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["RenderedConversation", "assistant_text", "render_conversation"]


@dataclass(frozen=True)
class RenderedConversation:
    prompt_ids: list[int]
    completion_ids: list[int]
    completion_mask: list[int]


def assistant_text(message: Mapping[str, Any]) -> str:
    """An assistant message as the reply text the LLM loop parses (content, then Hermes tool calls)."""
    from rolloutgym.llm import content_text

    pieces = [content_text(message.get("content"))]
    for call in message.get("tool_calls") or []:
        payload = {"name": call.get("name", ""), "arguments": call.get("arguments", {})}
        pieces.append(f"\n<tool_call>\n{json.dumps(payload, ensure_ascii=False)}\n</tool_call>")
    text = "".join(pieces)
    return text.lstrip("\n") if not pieces[0] else text


def render_conversation(
    renderer: Any, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
) -> RenderedConversation | None:
    """Render ``messages`` (rolloutgym shape, ending on an assistant turn); None without an assistant turn."""
    first = next((index for index, message in enumerate(messages) if message["role"] == "assistant"), None)
    if first is None:
        return None
    prompt_ids = renderer.render_prompt(list(messages[:first]), tools)
    end_of_turn = renderer.stop_token_ids[0]
    completion: list[int] = []
    mask: list[int] = []
    index = first
    while index < len(messages):
        reply = list(renderer.encode(assistant_text(messages[index]))) + [end_of_turn]
        completion.extend(reply)
        mask.extend([1] * len(reply))
        index += 1
        replies = []
        while index < len(messages) and messages[index]["role"] != "assistant":
            replies.append(messages[index])
            index += 1
        if replies:
            tail = renderer.render_continuation(reply, replies, tools)
            completion.extend(tail)
            mask.extend([0] * len(tail))
    return RenderedConversation(list(prompt_ids), completion, mask)
