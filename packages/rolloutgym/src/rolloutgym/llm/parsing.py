"""Parsing a model's raw reply text: Hermes ``<tool_call>`` blocks and ``<think>`` blocks.

The Hermes protocol (used by Qwen, Hermes, SmolLM and most open chat models) writes each
tool call as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``. A block that
cannot be parsed is *not* dropped (that would silently turn a tool call into a final
answer): it becomes a tool call with empty arguments, so the environment answers with a
tool error, and it is counted as an invalid action.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol.errors import json_error_text

from .configs import parse_fenced_tool_calls

__all__ = ["ParsedReply", "is_thinking_malformed", "parse_hermes_tool_calls", "parse_reply", "strip_thinking"]

_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL)
UNPARSEABLE_TOOL = "unparseable_tool_call"


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """A reply turned into an environment action.

    Attributes:
        action: the action to send (an assistant message dict, or a string for text envs).
        content: the visible text (thinking blocks removed unless kept).
        problems: why the reply is an invalid action (unparseable or unknown tool call,
            arguments that are not an object); empty when it is valid.
        malformed_thinking: ``<think>`` / ``</think>`` are unbalanced or out of order.
    """

    action: Any
    content: str
    problems: tuple[str, ...] = ()
    malformed_thinking: bool = False
    tool_calls: tuple[dict[str, Any], ...] = field(default=())

    @property
    def invalid(self) -> bool:
        return bool(self.problems)


def is_thinking_malformed(text: str, *, opened: bool = False) -> bool:
    """True when ``<think>`` blocks are unbalanced or nested/out of order.

    ``opened``: the generation prompt already opened a ``<think>`` block (thinking
    templates prefill it), so the reply starts inside one.
    """
    depth = 1 if opened else 0
    for match in re.finditer(r"</?think>", text):
        if match.group(0) == "<think>":
            if depth:
                return True
            depth = 1
        else:
            if not depth:
                return True
            depth = 0
    return depth != 0


def strip_thinking(text: str, *, opened: bool = False) -> str:
    """Remove ``<think>...</think>`` blocks (and an unclosed trailing one)."""
    if opened:
        head, separator, tail = text.partition("</think>")
        text = tail if separator else ""
    return _THINK.sub("", text)


def parse_hermes_tool_calls(text: str, *, call_id_prefix: str = "call") -> tuple[list[dict[str, Any]], list[str], str]:
    """Find the Hermes tool calls in ``text``.

    Returns:
        ``(tool_calls, problems, remaining_text)``: rolloutgym-shaped tool calls
        (``{"id", "name", "arguments"}``; a block's own non-empty string ``"id"`` is kept,
        else ``{call_id_prefix}_{index}``), the problems of blocks that did not parse
        (those still yield a call with empty arguments), and the text outside the blocks.
    """
    calls: list[dict[str, Any]] = []
    problems: list[str] = []
    for index, match in enumerate(_TOOL_CALL.finditer(text)):
        body = match.group(1).strip()
        call_id = f"{call_id_prefix}_{index}"
        if not match.group(0).endswith("</tool_call>"):
            problems.append(f"tool call {index} is not closed with </tool_call>")
        try:
            payload = json.loads(body)
        except ValueError as exc:  # also a number past Python's digit limit
            name_match = _NAME.search(body)
            problems.append(f"tool call {index}: not valid JSON ({json_error_text(exc)})")
            calls.append(
                {"id": call_id, "name": name_match.group(1) if name_match else UNPARSEABLE_TOOL, "arguments": {}}
            )
            continue
        if not isinstance(payload, Mapping):
            problems.append(f"tool call {index}: expected a JSON object with 'name' and 'arguments'")
            calls.append({"id": call_id, "name": UNPARSEABLE_TOOL, "arguments": {}})
            continue
        name = payload.get("name")
        arguments = payload.get("arguments", payload.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        if not isinstance(name, str) or not name:
            problems.append(f"tool call {index}: missing the function 'name'")
            name = UNPARSEABLE_TOOL
        if not isinstance(arguments, dict):
            problems.append(f"tool call {index} ({name}): 'arguments' must be a JSON object")
            arguments = {}
        own_id = payload.get("id")
        if isinstance(own_id, str) and own_id.strip():
            call_id = own_id  # the model's own id (e.g. Kimi's functions.NAME:0) names the tool result
        calls.append({"id": call_id, "name": name, "arguments": arguments})
    remaining = _TOOL_CALL.sub("", text)
    return calls, problems, remaining


def parse_reply(
    text: str,
    *,
    text_action: bool,
    tool_names: frozenset[str] | None = None,
    thinking_opened: bool = False,
    keep_thinking: bool = False,
    call_id_prefix: str = "call",
    fenced: bool = False,
    thinking_style: str | None = None,
) -> ParsedReply:
    """Turn the decoded text of one assistant turn into an environment action.

    Args:
        text: the reply text (special tokens such as the end-of-turn marker removed).
        text_action: the env takes plain text (``spaces.text``); otherwise an assistant
            message dict with optional ``tool_calls``.
        tool_names: the env's tool names; a call to another name is an invalid action
            (it is still sent, so the env answers with its own error message).
        thinking_opened: the generation prompt opened a ``<think>`` block.
        keep_thinking: keep ``<think>`` blocks in the action's content.
        fenced: also read tool calls written as fenced JSON blocks (the seed's default
            fenced-text path; see :mod:`rolloutgym.llm.configs`), when the reply has no
            ``<tool_call>`` block.
        thinking_style: ``"none"``: any ``<think>`` tag is malformed thinking.
    """
    malformed = is_thinking_malformed(text, opened=thinking_opened)
    if thinking_style == "none" and ("<think>" in text or "</think>" in text):
        malformed = True
    visible = text if keep_thinking else strip_thinking(text, opened=thinking_opened)
    if text_action:
        return ParsedReply(visible.strip(), visible.strip(), (), malformed)
    calls, problems, remaining = parse_hermes_tool_calls(visible, call_id_prefix=call_id_prefix)
    if fenced and not calls:
        calls, remaining = _fenced_calls(visible, problems, call_id_prefix)
    if tool_names is not None:
        for call in calls:
            if call["name"] not in tool_names and call["name"] != UNPARSEABLE_TOOL:
                known = ", ".join(sorted(tool_names)) or "none"
                problems.append(f"unknown tool '{call['name']}' (tools: {known})")
    content = remaining.strip()
    action: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        action["tool_calls"] = calls
    return ParsedReply(action, content, tuple(problems), malformed, tuple(calls))


def _fenced_calls(text: str, problems: list[str], call_id_prefix: str) -> tuple[list[dict[str, Any]], str]:
    calls, remaining = parse_fenced_tool_calls(text, call_id_prefix=call_id_prefix)
    for index, call in enumerate(calls):
        if not isinstance(call["arguments"], dict):
            problems.append(f"tool call {index} ({call['name']}): 'arguments' must be a JSON object")
            call["arguments"] = {}
    return calls, remaining


def message_problems(action: Mapping[str, Any], tool_names: frozenset[str] | None) -> list[str]:
    """Problems of an already-structured action message (unknown tools)."""
    problems = []
    if tool_names is not None:
        for call in action.get("tool_calls") or []:
            if call.get("name") not in tool_names:
                known = ", ".join(sorted(tool_names)) or "none"
                problems.append(f"unknown tool '{call.get('name')}' (tools: {known})")
    return problems
