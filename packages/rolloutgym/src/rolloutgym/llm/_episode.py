"""State shared by the per-episode callables of :class:`TokenPolicy` and :class:`ChatPolicy`."""

from __future__ import annotations

import asyncio
import hashlib
from array import array
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from rolloutgym_protocol import find_attribute, spaces

from .messages import env_tools, tool_names
from .parsing import ParsedReply

__all__ = ["LLMEpisodeBase", "call_maybe_sync", "token_digest"]


def token_digest(tokens: Sequence[int]) -> str:
    """A short, stable digest of a token sequence (used for the provenance check)."""
    return hashlib.blake2b(array("q", tokens).tobytes(), digest_size=8).hexdigest()


def call_maybe_sync(coroutine: Any) -> Any:
    """Return ``coroutine`` inside an event loop (the engine awaits it), else run it.

    This lets LLM policies drive sync ``rollout()`` as well as ``arollout()``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    return coroutine


def _takes_text(environment: Any) -> bool:
    space = getattr(environment, "action_space", None)
    return isinstance(space, (spaces.TextSpace, gym.spaces.Text))


class LLMEpisodeBase:
    """What one episode of an LLM policy tracks: tools, the action kind, counters."""

    def __init__(self, environment: Any, *, max_turns: int | None) -> None:
        self.environment = environment
        self.tools = env_tools(environment)
        self.tool_names = tool_names(self.tools) if self.tools else frozenset()
        self.text_action = _takes_text(environment)
        self.max_turns = max_turns
        self.turn = 0
        self.invalid_action_count = 0
        self.malformed_thinking_count = 0
        self.retokenization_mismatches = 0

    def env_stop_strings(self) -> tuple[str, ...]:
        """The stop strings the environment set for the next turn (``env.next_stop_strings``)."""
        value = find_attribute(self.environment, "next_stop_strings")
        if callable(value):
            value = value()
        if isinstance(value, str):
            return (value,)
        if isinstance(value, Sequence):
            return tuple(str(item) for item in value)
        return ()

    def end_action(self, reason: str | None = None) -> Any:
        """The action that ends the episode: a final answer with no tool calls.

        An env that offers ``policy_ended(reason)`` (a NeMo-style batched env's episode) is
        told first, so it can end without treating the empty answer as a reply.
        """
        if reason is not None:
            notice = find_attribute(self.environment, "policy_ended")
            if callable(notice):
                notice(reason)
        return "" if self.text_action else {"role": "assistant", "content": ""}

    def count(self, parsed: ParsedReply) -> None:
        if parsed.invalid:
            self.invalid_action_count += 1
        if parsed.malformed_thinking:
            self.malformed_thinking_count += 1

    def counters(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "invalid_action_count": self.invalid_action_count,
            "malformed_thinking_count": self.malformed_thinking_count,
            "retokenization_mismatches": self.retokenization_mismatches,
        }
