"""Stand-ins for a model, for tests and demos: :class:`ScriptedSampler` "samples" the
replies you give it, and :class:`CharRenderer` is a dependency-free ChatML renderer whose
tokens are characters.

They let everything around the model (rendering, parsing, token accounting, provenance)
run for real without torch or a tokenizer download.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .messages import content_text
from .sampling import Sample, SamplingParams

__all__ = ["CharRenderer", "ScriptedSampler"]


class ScriptedSampler:
    """Returns scripted replies as token ids.

    Args:
        encode: text -> token ids (e.g. ``renderer.encode``).
        replies: the replies in order (cycled), or ``reply(prompt_token_ids, call_index)``.
        end_token_id: appended to every reply that fits in ``max_tokens`` (``None``: none).
        logprob: the logprob reported for every token.
    """

    def __init__(
        self,
        encode: Callable[[str], Sequence[int]],
        replies: Sequence[str] | Callable[[Sequence[int], int], str],
        *,
        end_token_id: int | None = None,
        logprob: float = -0.5,
    ) -> None:
        self.encode = encode
        self.replies = replies
        self.end_token_id = end_token_id
        self.logprob = logprob
        self.calls = 0
        self.prompts: list[tuple[int, ...]] = []

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        index = self.calls
        self.calls += 1
        self.prompts.append(tuple(prompt_token_ids))
        if callable(self.replies):
            text = self.replies(prompt_token_ids, index)
        else:
            text = self.replies[index % len(self.replies)]
        tokens: list[Any] = list(self.encode(text))
        if self.end_token_id is not None:
            tokens.append(self.end_token_id)
        stop_reason = "stop"
        if len(tokens) > params.max_tokens:
            tokens, stop_reason = tokens[: params.max_tokens], "length"
        return Sample(tuple(tokens), tuple([self.logprob] * len(tokens)), stop_reason, tuple(prompt_token_ids))


class CharRenderer:
    """A ChatML :class:`~rolloutgym.llm.Renderer` with one token per character.

    Token ids: ``0`` = ``<|im_end|>`` (end of turn), ``1`` = ``<|im_start|>``, and
    ``16 + ord(character)`` for text. Tools are listed as JSON in the system turn; tool
    results are ``tool`` turns.
    """

    END = 0
    START = 1
    OFFSET = 16
    stop_token_ids = (0,)
    thinking_opened = False

    def encode(self, text: str) -> list[int]:
        return [self.OFFSET + ord(character) for character in text]

    def _turn(self, role: str, content: str) -> list[int]:
        return [self.START, *self.encode(f"{role}\n{content}"), self.END, *self.encode("\n")]

    def _messages(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        tokens: list[int] = []
        for message in messages:
            content = content_text(message.get("content"))
            for call in message.get("tool_calls") or ():
                content += (
                    "<tool_call>"
                    + json.dumps({"name": call.get("name"), "arguments": call.get("arguments")})
                    + "</tool_call>"
                )
            tokens += self._turn(str(message["role"]), content)
        return tokens

    def render_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[int]:
        prefix: list[int] = []
        if tools:
            prefix = self._turn("system", "Tools: " + json.dumps(list(tools), sort_keys=True))
        return prefix + self._messages(messages) + [self.START, *self.encode("assistant\n")]

    def render_continuation(
        self,
        sampled_tokens: Sequence[int],
        new_messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
    ) -> list[int]:
        closing = [] if sampled_tokens and sampled_tokens[-1] == self.END else [self.END]
        return closing + self.encode("\n") + self._messages(new_messages) + [self.START, *self.encode("assistant\n")]

    def decode(self, tokens: Sequence[int]) -> str:
        pieces = []
        for token in tokens:
            if token == self.END:
                continue
            pieces.append(
                "<|im_start|>" if token == self.START else chr(token - self.OFFSET) if token >= self.OFFSET else ""
            )
        return "".join(pieces)
