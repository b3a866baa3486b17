"""The token-level LLM policy: a :class:`Sampler` plus a :class:`Renderer` drive any chat env.

Each episode keeps one token context that only ever grows. Per turn:

1. the observation is rendered into the tokens to append (the first prompt, or the end of
   the previous assistant turn plus the new messages plus the generation prompt) and
   recorded in ``PolicyOutput.prompt_tokens`` (-> ``Step.observation_tokens``, loss mask 0);
2. the sampler continues the context; its tokens and logprobs are recorded verbatim in
   ``PolicyOutput.tokens``/``logprobs`` (-> ``Step.policy_tokens``/``policy_logprobs``);
3. the decoded reply is parsed into the env's action (text, or an assistant message with
   Hermes tool calls).

So a trajectory's token sequence is the concatenation, over steps, of observation tokens
and sampled tokens: exactly what the model conditioned on and produced. When the sampler
reports the prompt it saw, it is compared with that sequence every turn and any
difference is counted in ``retokenization_mismatches`` (it must stay 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rolloutgym_protocol import PolicyOutput
from rolloutgym_protocol.errors import ConfigError

from ._episode import token_digest
from ._policy import LLMEpisode, LLMPolicy
from .configs import StructuredToolUseConfig
from .messages import observation_messages
from .parsing import ParsedReply, parse_reply
from .renderers import Renderer
from .sampling import Sample, Sampler, SamplingParams, context_overflow

__all__ = ["TokenEpisode", "TokenPolicy"]


class TokenPolicy(LLMPolicy):
    """An env-aware policy over a token-level :class:`Sampler`.

    Args:
        sampler: the model backend.
        renderer: chat messages -> token ids (e.g. :class:`ChatTemplateRenderer`).
        max_tokens: the most tokens sampled per turn.
        max_seq_len: the most tokens in an episode's context (prompt, observations and
            samples). A sample is cut short to fit (``stop_reason="max_seq_len"``); an
            observation that does not fit is cut to fit and the episode ends. A first
            prompt that leaves no room ends the episode before the model speaks
            (``stop_reason="prompt_too_long"``: no answer was given, so trainers must not
            read its reward as a score).
        max_turns: the most assistant turns; then the episode ends with an empty final
            answer (``stop_reason="max_turns"``, nothing sampled).
        temperature: sampling temperature (ignored when ``greedy``).
        greedy: argmax decoding (same as ``temperature=0``).
        top_p: nucleus sampling.
        stop: stop strings for every turn; the env may add its own for the next turn
            through a ``next_stop_strings`` attribute.
        seed: base sampling seed; turn ``t`` of episode ``e`` uses ``seed + 1000 * e + t``.
        keep_thinking: keep ``<think>`` blocks in the actions sent to the env.
        name: a label stored in each step's ``policy_info["model"]``.
        structured_cfg: ``None`` (default): the fenced-text path (``<tool_call>`` blocks
            and fenced JSON tool calls are both read; prompts unchanged); a
            :class:`~rolloutgym.llm.StructuredToolUseConfig`: the Hermes protocol only.
    """

    def __init__(
        self,
        sampler: Sampler,
        renderer: Renderer,
        *,
        max_tokens: int = 512,
        max_seq_len: int | None = None,
        max_turns: int | None = None,
        temperature: float = 1.0,
        greedy: bool = False,
        top_p: float = 1.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
        keep_thinking: bool = False,
        name: str | None = None,
        structured_cfg: StructuredToolUseConfig | None = None,
    ) -> None:
        if max_seq_len is not None and max_seq_len < 2:
            raise ConfigError(f"max_seq_len must be at least 2, got {max_seq_len}")
        super().__init__(
            max_tokens=max_tokens,
            max_turns=max_turns,
            temperature=temperature,
            greedy=greedy,
            top_p=top_p,
            stop=stop,
            seed=seed,
            keep_thinking=keep_thinking,
            name=name,
        )
        self.sampler = sampler
        self.renderer = renderer
        self.max_seq_len = max_seq_len
        self.structured_cfg = structured_cfg


class TokenEpisode(LLMEpisode):
    """One episode of a :class:`TokenPolicy`: its token context and counters."""

    policy: TokenPolicy

    def __init__(self, policy: TokenPolicy, environment: Any, index: int) -> None:
        super().__init__(policy, environment, index)
        self.context: list[int] = []
        self.last_sample: tuple[int, ...] = ()
        self.exhausted = False

    def _observation_tokens(self, observation: Any) -> list[int]:
        messages = observation_messages(observation)
        renderer = self.policy.renderer
        if self.turn == 0:
            return renderer.render_prompt(messages, self.tools)
        return renderer.render_continuation(self.last_sample, messages, self.tools)

    def _end(self, observation_tokens: list[int], stop_reason: str) -> PolicyOutput:
        self.exhausted = True
        self.context.extend(observation_tokens)
        info = {**self.counters(), "context_tokens": len(self.context), "ended_by": stop_reason}
        if self.policy.name:
            info["model"] = self.policy.name
        return PolicyOutput(self.end_action(stop_reason), info, (), (), stop_reason, observation_tokens)

    def _params(self, max_tokens: int) -> SamplingParams:
        policy = self.policy
        seed = self.turn_seed()
        return SamplingParams(
            max_tokens=max_tokens,
            temperature=policy.temperature,
            top_p=policy.top_p,
            stop=policy.stop + self.env_stop_strings(),
            stop_token_ids=tuple(policy.renderer.stop_token_ids),
            seed=seed,
        )

    async def act(self, observation: Any) -> PolicyOutput:
        """Render ``observation``, sample one assistant turn, parse it into an action."""
        policy = self.policy
        observation_tokens = self._observation_tokens(observation)
        if self.exhausted:
            return self._end(self._fit(observation_tokens), "max_seq_len")
        if self.max_turns is not None and self.turn >= self.max_turns:
            return self._end(self._fit(observation_tokens), "max_turns")
        max_tokens = policy.max_tokens
        limited = False
        if policy.max_seq_len is not None:
            room = policy.max_seq_len - len(self.context) - len(observation_tokens)
            if room <= 0:
                # Before the model spoke, this is not an answer to score: say so.
                ended_by = "prompt_too_long" if self.turn == 0 else "max_seq_len"
                return self._end(self._fit(observation_tokens), ended_by)
            if room < max_tokens:
                max_tokens, limited = room, True
        self.context.extend(observation_tokens)
        params = self._params(max_tokens)
        digest = token_digest(self.context)
        try:
            sample: Sample = await policy.sampler.sample(tuple(self.context), params)
        except Exception as exc:
            if not context_overflow(exc):
                raise
            del self.context[len(self.context) - len(observation_tokens) :]  # _end records them once
            return self._end(observation_tokens, "prompt_too_long" if self.turn == 0 else "max_seq_len")
        mismatch = self._check(sample)
        self.context.extend(sample.token_ids)
        self.last_sample = sample.token_ids
        stop_reason = sample.stop_reason
        if stop_reason == "length" and limited:
            stop_reason = "max_seq_len"
            self.exhausted = True
        text, parsed = self._parse(sample.token_ids)
        self.count(parsed)
        self.turn += 1
        info: dict[str, Any] = {
            **self.counters(),
            "text": text,
            "invalid_action": parsed.invalid,
            "malformed_thinking": parsed.malformed_thinking,
            "retokenization_mismatch": mismatch,
            "prompt_digest": digest,
            "context_tokens": len(self.context),
            "max_tokens": max_tokens,
        }
        if parsed.problems:
            info["problems"] = list(parsed.problems)
        if params.stop:
            info["stop_strings"] = list(params.stop)
        if self.turn == 1 and self.tools:
            info["tools"] = self.tools  # once per trajectory, for exporters
        if policy.name:
            info["model"] = policy.name
        if sample.info:
            info["sampler"] = dict(sample.info)
        return PolicyOutput(parsed.action, info, sample.token_ids, sample.logprobs, stop_reason, observation_tokens)

    def _parse(self, token_ids: Sequence[int]) -> tuple[str, ParsedReply]:
        """Decode a sample and parse it into an action, by the policy's tool protocol."""
        policy = self.policy
        structured = policy.structured_cfg
        renderer = policy.renderer
        if structured is not None and structured.decode_skip_special_tokens and hasattr(renderer, "decode_text"):
            text = renderer.decode_text(token_ids)
        else:
            text = renderer.decode(token_ids)
        opened = renderer.thinking_opened
        if structured is not None and structured.thinking_opened is not None:
            opened = structured.thinking_opened
        parsed = parse_reply(
            text,
            text_action=self.text_action,
            tool_names=self.tool_names if self.tools else None,
            thinking_opened=opened,
            keep_thinking=policy.keep_thinking,
            call_id_prefix=f"call_{self.turn}",
            fenced=structured is None,
            thinking_style=None if structured is None else structured.thinking_style,
        )
        return text, parsed

    def _fit(self, observation_tokens: list[int]) -> list[int]:
        if self.policy.max_seq_len is None:
            return observation_tokens
        return observation_tokens[: max(0, self.policy.max_seq_len - len(self.context))]

    def _check(self, sample: Sample) -> bool:
        """The provenance check: the sampler saw exactly the recorded context, and gave
        one logprob per token."""
        mismatch = False
        if sample.prompt_token_ids is not None and list(sample.prompt_token_ids) != self.context:
            mismatch = True
        if sample.logprobs is not None and len(sample.logprobs) != len(sample.token_ids):
            mismatch = True
        if mismatch:
            self.retokenization_mismatches += 1
        return mismatch


TokenPolicy.episode_type = TokenEpisode
