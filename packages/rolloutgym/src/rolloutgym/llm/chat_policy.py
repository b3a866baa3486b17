"""The message-level LLM policy, for backends that apply their own chat template.

Subclass :class:`ChatPolicy` and implement :meth:`ChatPolicy.complete`; the base class
keeps the conversation, sends the env's tools, parses the reply (OpenAI-style tool calls,
or Hermes ``<tool_call>`` blocks in the text) into the env's action, counts invalid actions
and malformed thinking, and records usage, tokens and logprobs when the backend returns
them.

When the backend returns the prompt token ids it used, the policy checks that each turn's
prompt starts with the previous turn's prompt plus the tokens sampled then. A server that
re-renders the history differently (the classic re-tokenisation drift) shows up in
``retokenization_mismatches``; otherwise the new part of the prompt is recorded as the
step's observation tokens, so the trajectory's token sequence is exact.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol import PolicyOutput
from rolloutgym_protocol.errors import PolicyError

from ._episode import token_digest
from ._policy import LLMEpisode, LLMPolicy
from .messages import from_openai_message, observation_messages
from .parsing import message_problems, parse_reply
from .sampling import Completion, SamplingParams, context_overflow

__all__ = ["ChatEpisode", "ChatPolicy"]


class ChatPolicy(LLMPolicy, abc.ABC):
    """An env-aware policy over a chat-completion backend.

    Args:
        max_tokens: the most tokens per reply.
        max_turns: the most assistant turns; then the episode ends with an empty final answer.
            A backend that refuses a prompt as too long for its context
            (:class:`~rolloutgym.llm.PromptTooLong`, or a server's HTTP 400 saying so) ends the
            episode the same way: ``stop_reason="prompt_too_long"`` before the first reply
            (no answer: left out of rewards and pass rates), ``"max_seq_len"`` later.
        temperature: sampling temperature (``0`` or ``greedy=True``: argmax).
        greedy: argmax decoding.
        top_p: nucleus sampling.
        stop: stop strings for every turn (the env may add its own, ``next_stop_strings``).
        seed: base seed passed to the backend.
        keep_thinking: keep ``<think>`` blocks in the actions and in the conversation.
        name: a label stored in each step's ``policy_info["model"]``.
    """

    def __init__(
        self,
        *,
        max_tokens: int = 1024,
        max_turns: int | None = None,
        temperature: float = 1.0,
        greedy: bool = False,
        top_p: float = 1.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
        keep_thinking: bool = False,
        name: str | None = None,
    ) -> None:
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

    @abc.abstractmethod
    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        params: SamplingParams,
    ) -> Completion:
        """Ask the backend for the next assistant message.

        Args:
            messages: the conversation so far in rolloutgym's shape (tool calls as
                ``{"id", "name", "arguments": {...}}``; use
                :func:`~rolloutgym.llm.to_openai_messages` for the wire shape).
            tools: the env's OpenAI-style tool definitions (may be empty).
            params: sampling parameters for this turn.
        """


class ChatEpisode(LLMEpisode):
    """One episode of a :class:`ChatPolicy`: the conversation and counters."""

    policy: ChatPolicy

    def __init__(self, policy: ChatPolicy, environment: Any, index: int) -> None:
        super().__init__(policy, environment, index)
        self.messages: list[dict[str, Any]] = []
        self.usage: dict[str, int] = {}
        self.context: list[int] | None = []

    def _params(self) -> SamplingParams:
        policy = self.policy
        return SamplingParams(
            max_tokens=policy.max_tokens,
            temperature=policy.temperature,
            top_p=policy.top_p,
            stop=policy.stop + self.env_stop_strings(),
            seed=self.turn_seed(),
        )

    def _parse(self, completion: Completion) -> tuple[Any, str, list[str], bool]:
        policy = self.policy
        known = self.tool_names if self.tools else None
        prefix = f"call_{self.turn}"
        message = completion.message
        if message is not None and message.get("tool_calls"):
            action, problems = from_openai_message(message, call_id_prefix=prefix)
            problems += message_problems(action, known)
            text = action.get("content", "")
            parsed = parse_reply(text, text_action=True, keep_thinking=policy.keep_thinking)
            action["content"] = parsed.content
            if self.text_action:
                return parsed.content, text, problems, parsed.malformed_thinking
            return action, text, problems, parsed.malformed_thinking
        text = completion.text if message is None else from_openai_message(message)[0]["content"]
        parsed = parse_reply(
            text or "",
            text_action=self.text_action,
            tool_names=known,
            keep_thinking=policy.keep_thinking,
            call_id_prefix=prefix,
        )
        return parsed.action, text or "", list(parsed.problems), parsed.malformed_thinking

    def _observation_tokens(self, completion: Completion) -> tuple[tuple[int, ...] | None, bool]:
        """The new part of the prompt, and whether the prompt contradicted the history."""
        if completion.prompt_tokens is None or self.context is None:
            self.context = None  # a backend that stops reporting prompts: no token sequence
            return None, False
        prompt = list(completion.prompt_tokens)
        known = len(self.context)
        if prompt[:known] != self.context:
            self.retokenization_mismatches += 1
            self.context = prompt + list(completion.tokens or ())
            return tuple(prompt), True
        self.context = prompt + list(completion.tokens or ())
        return tuple(prompt[known:]), False

    async def act(self, observation: Any) -> PolicyOutput:
        """Add ``observation`` to the conversation, ask the backend, parse the reply."""
        policy = self.policy
        self.messages.extend(observation_messages(observation))
        if self.max_turns is not None and self.turn >= self.max_turns:
            ended = {**self.counters(), "ended_by": "max_turns"}
            return PolicyOutput(self.end_action("max_turns"), ended, (), (), "max_turns")
        try:
            completion = await policy.complete(list(self.messages), self.tools, self._params())
        except Exception as exc:
            if not context_overflow(exc):
                raise
            # The backend refused the prompt as too long: before the model spoke, that is no answer to score.
            reason = "prompt_too_long" if self.turn == 0 else "max_seq_len"
            ended = {**self.counters(), "ended_by": reason, "refusal": str(exc)[:300]}
            return PolicyOutput(self.end_action(reason), ended, (), (), reason)
        if completion.message is None and completion.text is None:
            raise PolicyError(f"{type(policy).__name__}.complete() returned a Completion with neither message nor text")
        action, text, problems, malformed = self._parse(completion)
        self.count_values(bool(problems), malformed)
        observation_tokens, mismatch = self._observation_tokens(completion)
        if isinstance(action, str):
            self.messages.append({"role": "assistant", "content": text if policy.keep_thinking else action})
        else:
            self.messages.append(dict(action))
        for key, value in completion.usage.items():
            self.usage[key] = self.usage.get(key, 0) + int(value)
        self.turn += 1
        info: dict[str, Any] = {
            **self.counters(),
            "text": text,
            "invalid_action": bool(problems),
            "malformed_thinking": malformed,
            "retokenization_mismatch": mismatch,
            "usage": dict(completion.usage),
            "usage_total": dict(self.usage),
            **dict(completion.info),
        }
        if completion.prompt_tokens is not None:
            info["prompt_digest"] = token_digest(completion.prompt_tokens)
        if problems:
            info["problems"] = problems
        if self.turn == 1 and self.tools:
            info["tools"] = self.tools  # once per trajectory, for exporters
        if policy.name:
            info.setdefault("model", policy.name)
        return PolicyOutput(
            action, info, completion.tokens, completion.logprobs, completion.stop_reason, observation_tokens
        )

    def count_values(self, invalid: bool, malformed: bool) -> None:
        if invalid:
            self.invalid_action_count += 1
        if malformed:
            self.malformed_thinking_count += 1


ChatPolicy.episode_type = ChatEpisode
