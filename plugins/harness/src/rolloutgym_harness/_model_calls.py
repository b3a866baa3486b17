"""How the interception endpoint answers one model call: sampling parameters, prompt, reply.

:class:`ModelCalls` is the part of :class:`~rolloutgym_harness.endpoint.InterceptionEndpoint`
that asks the policy: the sampling parameters (the harness's request under the trainer's
``force``), then either a token-level call (the prompt rendered, or the session's context
continued when the harness sent back the conversation the endpoint answered) or a
message-level one (``complete``, forwarded); both say whether the call extends the session's
context or starts a new segment. Recording the call is the endpoint's (``call``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rolloutgym.llm import SamplingParams, parse_reply
from rolloutgym.llm.messages import content_text

from . import wire
from .recording import EndpointSession

__all__ = ["ModelCalls"]

_SAMPLING_KEYS = ("max_tokens", "temperature", "top_p", "stop", "seed")


def _canonical(message: Mapping[str, Any]) -> str:
    calls = [(call.get("name", ""), call.get("arguments", {})) for call in message.get("tool_calls") or ()]
    item = [message.get("role"), content_text(message.get("content")).strip(), calls, message.get("tool_call_id")]
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=repr)


class ModelCalls:
    """The policy side of the endpoint (a base of ``InterceptionEndpoint``, which sets ``policy`` and ``force``)."""

    policy: Any
    force: dict[str, Any]

    def _params(self, requested: Mapping[str, Any]) -> SamplingParams:
        policy = self.policy
        merged = {**requested, **self.force}
        temperature = merged.get("temperature")
        if temperature is None:
            temperature = 0.0 if getattr(policy, "greedy", False) else getattr(policy, "temperature", 1.0)
        stop = tuple(merged.get("stop") or getattr(policy, "stop", ()) or ())
        renderer = getattr(policy, "renderer", None)
        return SamplingParams(
            max_tokens=int(merged.get("max_tokens") or getattr(policy, "max_tokens", 512)),
            temperature=float(temperature),
            top_p=float(merged.get("top_p") if merged.get("top_p") is not None else getattr(policy, "top_p", 1.0)),
            stop=stop,
            stop_token_ids=tuple(getattr(renderer, "stop_token_ids", ())),
            seed=merged.get("seed"),
        )

    def _prompt(self, session: EndpointSession, request: wire.Request) -> tuple[list[int], bool, list[str]]:
        renderer = self.policy.renderer
        canonical = [_canonical(message) for message in request.messages]
        tools_key = json.dumps(request.tools, sort_keys=True)
        history = session.history
        if (
            history is not None
            and session.context is not None
            and tools_key == session.tools_key
            and len(canonical) > len(history)
            and canonical[: len(history)] == history
        ):
            new = request.messages[len(history) :]
            tail = renderer.render_continuation(session.last_completion, new, request.tools)
            return session.context + list(tail), True, canonical
        prompt = list(renderer.render_prompt(request.messages, request.tools))
        context = session.context
        extends = context is not None and prompt[: len(context)] == context
        return prompt, extends, canonical

    async def _token_call(
        self, session: EndpointSession, request: wire.Request, params: SamplingParams
    ) -> tuple[wire.Reply, dict[str, Any]]:
        policy = self.policy
        prompt, extends, canonical = self._prompt(session, request)
        sample = await policy.sampler.sample(prompt, params)
        tokens = tuple(sample.token_ids)
        text = policy.renderer.decode(tokens)
        parsed = parse_reply(
            text,
            text_action=False,
            thinking_opened=getattr(policy.renderer, "thinking_opened", False),
            keep_thinking=True,
            call_id_prefix=f"call_{session.name}_{len(session.calls)}",
        )
        action = parsed.action
        reply = wire.Reply(
            content=action.get("content", ""),
            tool_calls=list(action.get("tool_calls") or ()),
            stop_reason=sample.stop_reason,
            prompt_tokens=len(prompt),
            completion_tokens=len(tokens),
            token_ids=tokens,
            prompt_token_ids=tuple(prompt),
            logprobs=None if sample.logprobs is None else tuple(sample.logprobs),
        )
        first = session.context is None
        new_segment = not first and not extends
        session.context = prompt + list(tokens)
        session.history = [*canonical, _canonical(action)]
        session.tools_key = json.dumps(request.tools, sort_keys=True)
        session.last_completion = tokens
        return reply, {"extends": extends, "new_segment": new_segment, "text": text}

    async def _message_call(
        self, session: EndpointSession, request: wire.Request, params: SamplingParams
    ) -> tuple[wire.Reply, dict[str, Any]]:
        completion = await self.policy.complete(request.messages, request.tools, params)
        if completion.message is not None:
            from rolloutgym.llm.messages import from_openai_message

            action, _ = from_openai_message(completion.message)
        else:
            action = parse_reply(completion.text or "", text_action=False, keep_thinking=True).action
        prompt = None if completion.prompt_tokens is None else list(completion.prompt_tokens)
        tokens = None if completion.tokens is None else tuple(completion.tokens)
        canonical = [_canonical(message) for message in request.messages]
        if prompt is not None:  # the server gave token ids (vLLM's return_token_ids): compare tokens
            extends = session.context is not None and prompt[: len(session.context)] == session.context
            new_segment = session.context is not None and not extends
            session.context = prompt + list(tokens or ())
        else:  # text only: the call extends when the harness sent back the history the endpoint answered
            history = session.history
            extends = history is not None and len(canonical) > len(history) and canonical[: len(history)] == history
            new_segment = history is not None and not extends
        session.history = [*canonical, _canonical(action)]
        usage = dict(completion.usage)
        reply = wire.Reply(
            content=action.get("content", ""),
            tool_calls=list(action.get("tool_calls") or ()),
            stop_reason="length" if completion.stop_reason == "length" else "stop",
            prompt_tokens=int(usage.get("prompt_tokens", len(prompt or ()))),
            completion_tokens=int(usage.get("completion_tokens", len(tokens or ()))),
            token_ids=tokens,
            prompt_token_ids=None if prompt is None else tuple(prompt),
            logprobs=None if completion.logprobs is None else tuple(completion.logprobs),
        )
        text = completion.text if completion.text is not None else reply.content
        upstream = {"usage": usage, "finish_reason": completion.stop_reason}
        upstream.update(
            {key: completion.info[key] for key in ("response_id", "server_model") if key in completion.info}
        )
        return reply, {"extends": extends, "new_segment": new_segment, "text": text, "upstream": upstream}
