"""What a model backend implements: :class:`Sampler` (token level) and the records it returns.

A token-level backend (transformers, vLLM's offline engine, Tinker) implements
:class:`Sampler`; a message-level backend (an OpenAI-compatible server that applies its
own chat template) subclasses :class:`~rolloutgym.llm.ChatPolicy` and returns a
:class:`Completion`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from rolloutgym_protocol.errors import PolicyError

__all__ = ["STOP_REASONS", "Completion", "PromptTooLong", "Sample", "Sampler", "SamplingParams", "context_overflow"]

STOP_REASONS = ("stop", "length", "max_seq_len", "max_turns", "prompt_too_long", "error")
"""Stop reasons used by the loop: ``stop`` (an end-of-turn token or a stop string),
``length`` (``max_tokens`` reached), ``max_seq_len`` (the context budget was spent),
``max_turns`` (the turn budget was spent; nothing was sampled), ``prompt_too_long`` (the
first prompt did not fit: the model never spoke)."""


@dataclass(frozen=True, slots=True)
class SamplingParams:
    """How to sample one assistant turn.

    Attributes:
        max_tokens: the most tokens to sample in this turn (the loop lowers it so that the
            context never exceeds ``max_seq_len``).
        temperature: softmax temperature; ``0`` means greedy.
        top_p: nucleus sampling mass (``1.0`` = off).
        stop: stop strings; the sample ends after the token that completes one of them
            (the stop string is kept in the sampled tokens, which are recorded verbatim).
        stop_token_ids: token ids that end the turn (kept in the sampled tokens).
        seed: a seed for this sample, for reproducible sampling where the backend supports it.
        extra: backend-specific options, passed through untouched.
    """

    max_tokens: int = 512
    temperature: float = 1.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    seed: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def greedy(self) -> bool:
        """True when the temperature is 0 (argmax decoding)."""
        return self.temperature <= 0.0


@dataclass(frozen=True, slots=True)
class Sample:
    """One sampled continuation, exactly as the backend produced it.

    Attributes:
        token_ids: the sampled token ids, verbatim (including a final end-of-turn token or
            the tokens of a stop string when the backend emitted them).
        logprobs: one log-probability per sampled token (``None`` when the backend gives none).
        stop_reason: ``"stop"`` or ``"length"`` (see :data:`STOP_REASONS`).
        prompt_token_ids: the prompt the backend actually conditioned on, when it reports
            it; the loop compares it with the recorded context (the provenance check).
        info: backend details (timings, model name), stored in the step's ``policy_info``.
    """

    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...] | None = None
    stop_reason: str = "stop"
    prompt_token_ids: tuple[int, ...] | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if type(self.token_ids) is not tuple:
            object.__setattr__(self, "token_ids", tuple(self.token_ids))
        if self.logprobs is not None and type(self.logprobs) is not tuple:
            object.__setattr__(self, "logprobs", tuple(self.logprobs))
        if self.prompt_token_ids is not None and type(self.prompt_token_ids) is not tuple:
            object.__setattr__(self, "prompt_token_ids", tuple(self.prompt_token_ids))


@runtime_checkable
class Sampler(Protocol):
    """A token-in, token-out model backend.

    Implementations must be safe to call from many episodes at once (the loop runs
    episodes concurrently on one event loop); a backend that is not may serialise calls
    with an ``asyncio.Lock`` or batch them.
    """

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        """Sample one continuation of ``prompt_token_ids``."""
        ...


@dataclass(frozen=True, slots=True)
class Completion:
    """One assistant turn from a message-level backend (:class:`~rolloutgym.llm.ChatPolicy`).

    Give either ``message`` (an OpenAI-style or rolloutgym assistant message; tool-call
    arguments may be a JSON string or an object) or ``text`` (raw text, parsed for Hermes
    ``<tool_call>`` blocks).

    Attributes:
        message: the assistant message.
        text: the raw assistant text (used when ``message`` is None).
        tokens: sampled token ids, when the backend returns them.
        logprobs: one log-probability per sampled token, when offered.
        prompt_tokens: the prompt token ids, when the backend returns them.
        stop_reason: ``"stop"`` / ``"length"`` / ``"tool_calls"`` ... as the backend says.
        usage: token usage (``prompt_tokens``, ``completion_tokens``), summed per trajectory.
        info: anything else to keep in the step's ``policy_info``.
    """

    message: Mapping[str, Any] | None = None
    text: str | None = None
    tokens: Sequence[int] | None = None
    logprobs: Sequence[float] | None = None
    prompt_tokens: Sequence[int] | None = None
    stop_reason: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)


class PromptTooLong(PolicyError):
    """A backend's refusal of a prompt that does not fit in its model's context.

    Raise it from ``Sampler.sample`` or ``ChatPolicy.complete``: the episode then ends as the
    token loop ends one whose context is full, ``stop_reason="prompt_too_long"`` when the model
    has not spoken yet (no answer, so no score: left out of rewards and pass rates), else
    ``"max_seq_len"``. A server's HTTP 400 that says so (vLLM's "maximum context length",
    OpenAI's ``context_length_exceeded``) counts the same, see :func:`context_overflow`.
    """


_OVERFLOW_WORDS = re.compile(
    r"maximum context length|context[_ ]length[_ ]exceeded|context window|prompt is too long|input is too long"
    r"|prompt too long|too many (?:input )?tokens|longer than the model'?s? (?:maximum|max)",
    re.IGNORECASE,
)


def context_overflow(exc: BaseException) -> bool:
    """``exc`` says the prompt does not fit in the model's context (:class:`PromptTooLong`, or a
    server's HTTP 400/413/422 whose message says so)."""
    if isinstance(exc, PromptTooLong):
        return True
    status = getattr(exc, "status", None)
    message = str(getattr(exc, "server_message", None) or exc)
    return status in (400, 413, 422) and bool(_OVERFLOW_WORDS.search(message))
