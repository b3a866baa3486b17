"""What the interception endpoint records: one :class:`CallRecord` per model call, the calls of
one conversation as an :class:`EndpointSession` (and its ``Trajectory`` with exact tokens and
loss masks), and :func:`check_rerender` over recorded calls."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rolloutgym.llm import token_digest
from rolloutgym_protocol import Step, Trajectory

__all__ = ["CallRecord", "EndpointSession", "check_rerender"]


@dataclass
class CallRecord:
    """One model call, as the harness sent it and as the model answered."""

    index: int
    api: str
    session: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    requested: dict[str, Any]
    params: dict[str, Any]
    prompt_token_ids: list[int] | None
    completion_token_ids: list[int] | None
    logprobs: list[float] | None
    stop_reason: str
    text: str
    tool_calls: list[dict[str, Any]]
    segment: int
    new_segment: bool
    # The prompt extends the previous prompt + completion token for token (a forwarded call without
    # token ids: its messages extend the previous messages + the reply).
    extends: bool
    seconds: float
    # A forwarded call (openai:): what the upstream server said beyond the message (its usage
    # counts, finish reason, response id, model). Empty for token-level policies.
    upstream: dict[str, Any] = field(default_factory=dict)
    # which of the call's ``n`` samples this is (0 for the first; the others share its prompt)
    choice: int = 0
    # what the endpoint changed or withheld (a tool call cut by the length limit handed out as
    # text, control-token text in the messages kept as text)
    problems: list[str] = field(default_factory=list)
    response_id: str | None = None  # a Responses API call: the id its reply was given
    # the start of the reply the endpoint wrote (tool_choice required or a named function): the
    # last tokens of the prompt, not sampled
    prefill: str = ""
    # the rollout graph (rolloutgym_harness.lineages): the call's lineage and its parent call (the
    # latest earlier call whose prompt + completion its prompt extends), set when a harness step is recorded
    lineage: int | None = None
    parent: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EndpointSession:
    """One conversation's calls and token context."""

    name: str
    calls: list[CallRecord] = field(default_factory=list)
    stop_reason: str | None = None
    context: list[int] | None = None  # previous prompt + completion
    history: list[str] | None = None  # canonical messages of that context
    tools_key: str = ""
    last_completion: tuple[int, ...] = ()
    segments: int = 0
    # the other choices' prompt + completion of the latest call with n > 1: the next call may continue any
    choices: list[list[int]] = field(default_factory=list)
    # recent calls a new call may continue: (canonical messages + reply, prompt + completion, tools key, completion)
    branches: list[tuple[list[str], list[int], str, tuple[int, ...]]] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def trajectory(self, *, reward: float = 0.0, metadata: Mapping[str, Any] | None = None) -> Trajectory:
        """The calls as steps: observation tokens (loss mask 0) then sampled tokens (mask 1).

        A call whose prompt does not extend the previous context starts a new segment: its
        step's ``observation_tokens`` are its whole prompt and ``policy_info`` says
        ``retokenization_mismatch`` (the convention of :class:`~rolloutgym.llm.ChatPolicy`). The
        other choices of a call with ``n > 1`` are siblings of its first: their observation tokens
        are their whole prompt (``policy_info["choice"]``); the next call continues whichever
        choice its prompt extends.
        """
        steps = []
        # the contexts (prompt + completion) of the latest call's choices: a call extends one of them
        previous: list[list[int]] = []
        current: list[list[int]] = []
        for position, call in enumerate(self.calls):
            prompt = call.prompt_token_ids
            observation_tokens = None
            if call.choice == 0:
                previous, current = current or previous, []
            if prompt is not None:
                observation_tokens = tuple(prompt)  # a new segment, or a sibling choice: its whole prompt
                if call.extends:
                    bases = [base for base in previous if prompt[: len(base)] == base]
                    if bases:
                        observation_tokens = tuple(prompt[len(max(bases, key=len)) :])
                current.append(list(prompt) + list(call.completion_token_ids or ()))
            info = {
                "turn": position + 1,
                "api": call.api,
                "text": call.text,
                "segment": call.segment,
                "choice": call.choice,
                "retokenization_mismatch": call.new_segment,
                "requested": call.requested,
                "params": call.params,
            }
            if prompt is not None:
                info["prompt_digest"] = token_digest(prompt)
            if position == 0 and call.tools:
                info["tools"] = call.tools
            last = position == len(self.calls) - 1
            action = {"role": "assistant", "content": call.text}
            if call.tool_calls:
                action["tool_calls"] = call.tool_calls
            steps.append(
                Step(
                    observation=call.messages,
                    action=action,
                    reward=reward if last else 0.0,
                    next_observation=None,
                    terminated=last and self.stop_reason in (None, "done"),
                    truncated=last and self.stop_reason not in (None, "done"),
                    policy_info=info,
                    policy_tokens=None if call.completion_token_ids is None else tuple(call.completion_token_ids),
                    policy_logprobs=None if call.logprobs is None else tuple(call.logprobs),
                    policy_stop_reason=call.stop_reason,
                    observation_tokens=observation_tokens,
                )
            )
        first = self.calls[0].messages if self.calls else []
        meta = {"segments": self.segments, "calls": len(self.calls), **dict(metadata or {})}
        return Trajectory(first, tuple(steps), metadata=meta, stop_reason=self.stop_reason or "done")


def check_rerender(renderer: Any, calls: Sequence[CallRecord]) -> list[int]:
    """Indices of calls whose re-rendered messages differ from the recorded prompt tokens,
    among calls that started a segment (the others continue the recorded context verbatim)."""
    bad = []
    for call in calls:
        if call.prompt_token_ids is None or call.extends:
            continue
        rendered = list(renderer.render_prompt(call.messages, call.tools))
        if call.prefill:
            rendered += list(renderer.encode(call.prefill))
        if rendered != call.prompt_token_ids:
            bad.append(call.index)
    return bad
