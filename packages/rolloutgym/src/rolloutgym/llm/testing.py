"""A scripted :class:`Sampler` for tests and demos: it "samples" replies you give it.

It encodes each reply with a real renderer/tokenizer, so everything around it (rendering,
parsing, token accounting, provenance) runs for real; only the model is replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .sampling import Sample, SamplingParams

__all__ = ["ScriptedSampler"]


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
