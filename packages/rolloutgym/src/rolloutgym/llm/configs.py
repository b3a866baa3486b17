"""The two switches of the seed's multi-turn API: the tool protocol and the invalid-action penalty.

* :class:`StructuredToolUseConfig` -- ``structured_cfg``. ``None`` (the default) is the
  *fenced-text* path: prompts are rendered exactly as before (byte-identical token
  streams), and a reply's tool calls are read from ``<tool_call>`` blocks *and* from fenced
  JSON blocks (```` ```json {"name": ..., "arguments": {...}} ``` ````), so a fenced call is a
  tool call, not a final answer. A config object opts into the structured (Hermes) protocol
  only: fenced blocks are plain text, and ``thinking_style`` is threaded into the
  malformed-thinking detector.
* :class:`InvalidActionPenaltyConfig` -- ``invalid_action_cfg``. ``None`` keeps the counts as
  columns and leaves rewards alone; ``enabled=True`` turns each sample's invalid-action and
  malformed-thinking counts into a reward penalty (``total_reward`` is penalised, the env's
  own reward stays in ``env_reward``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol.errors import ConfigError

__all__ = ["InvalidActionPenaltyConfig", "StructuredToolUseConfig", "parse_fenced_tool_calls"]

_FENCE = re.compile(r"```[ \t]*(json|tool_call|tool|function_call)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_THINKING_STYLES = (None, "qwen3", "deepseek-r1", "none")


@dataclass(frozen=True)
class StructuredToolUseConfig:
    """Opt into the structured (Hermes ``<tool_call>``) tool-use protocol.

    Attributes:
        decode_skip_special_tokens: decode the assistant content without special tokens.
            ``False`` (the default) keeps them, so ``<tool_call>`` tags survive for the
            parser; the sampled token ids are recorded verbatim either way.
        thinking_style: how the model thinks: ``"qwen3"``/``"deepseek-r1"`` (``<think>``
            blocks; the malformed-thinking detector checks them), ``"none"`` (no thinking:
            a ``<think>`` tag counts as malformed), or ``None`` (the renderer decides).
        thinking_opened: the generation prompt already opens ``<think>`` (``None``: the
            renderer's own ``thinking_opened``).
    """

    decode_skip_special_tokens: bool = False
    thinking_style: str | None = None
    thinking_opened: bool | None = None

    def __post_init__(self) -> None:
        if self.thinking_style not in _THINKING_STYLES:
            shown = ", ".join(repr(style) for style in _THINKING_STYLES)
            raise ConfigError(f"thinking_style must be one of {shown}, got {self.thinking_style!r}")


@dataclass(frozen=True)
class InvalidActionPenaltyConfig:
    """Turn per-sample invalid-action counts into a reward penalty.

    ``total_reward = env_reward - min(max_penalty, invalid_action_penalty * invalid_action_count
    + malformed_thinking_penalty * malformed_thinking_count)`` when ``enabled``.

    Attributes:
        enabled: collect the counts and apply the penalty.
        invalid_action_penalty: subtracted per invalid action (an unparseable tool call,
            an unknown tool, arguments that are not an object).
        malformed_thinking_penalty: subtracted per turn with unbalanced ``<think>`` tags.
        max_penalty: the most subtracted from one sample (``None``: no cap).
    """

    enabled: bool = True
    invalid_action_penalty: float = 0.1
    malformed_thinking_penalty: float = 0.1
    max_penalty: float | None = None

    def __post_init__(self) -> None:
        for name in ("invalid_action_penalty", "malformed_thinking_penalty"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be non-negative, got {getattr(self, name)}")
        if self.max_penalty is not None and self.max_penalty < 0:
            raise ConfigError(f"max_penalty must be non-negative or None, got {self.max_penalty}")

    def penalty(self, invalid_actions: int, malformed_thinking: int) -> float:
        """What one sample with these counts loses (0.0 when not enabled)."""
        if not self.enabled:
            return 0.0
        value = self.invalid_action_penalty * invalid_actions + self.malformed_thinking_penalty * malformed_thinking
        return value if self.max_penalty is None else min(value, self.max_penalty)


def _as_call(payload: Any, index: int, call_id_prefix: str) -> dict[str, Any] | None:
    if not isinstance(payload, Mapping) or not isinstance(payload.get("name"), str) or not payload["name"]:
        return None
    if "arguments" not in payload and "parameters" not in payload:
        return None
    arguments = payload.get("arguments", payload.get("parameters"))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:  # also a number past Python's digit limit
            pass
    own_id = payload.get("id")
    call_id = own_id if isinstance(own_id, str) and own_id.strip() else f"{call_id_prefix}_{index}"
    return {"id": call_id, "name": payload["name"], "arguments": arguments}


def parse_fenced_tool_calls(text: str, *, call_id_prefix: str = "call") -> tuple[list[dict[str, Any]], str]:
    """The tool calls written as fenced JSON blocks, and the text outside those blocks.

    A block is a call when its body is a JSON object with a string ``"name"`` and
    ``"arguments"`` (or ``"parameters"``), or a JSON list of such objects; other fenced
    blocks (code, plain JSON data) stay text. Arguments that are not an object are kept
    as given, so the caller reports them as an invalid action.
    """
    calls: list[dict[str, Any]] = []
    pieces: list[str] = []
    position = 0
    for match in _FENCE.finditer(text):
        try:
            payload = json.loads(match.group(2))
        except (ValueError, RecursionError):
            continue
        found = [
            _as_call(item, len(calls) + offset, call_id_prefix)
            for offset, item in enumerate(payload if isinstance(payload, list) else [payload])
        ]
        if not found or any(call is None for call in found):
            continue
        calls.extend(call for call in found if call is not None)
        pieces.append(text[position : match.start()])
        position = match.end()
    pieces.append(text[position:])
    return calls, "".join(pieces)
