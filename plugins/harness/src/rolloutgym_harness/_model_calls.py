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
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rolloutgym.llm import SamplingParams, parse_reply
from rolloutgym.llm.messages import content_text
from rolloutgym.llm.parsing import UNPARSEABLE_TOOL
from rolloutgym_protocol.errors import ConfigError

from . import wire
from .recording import EndpointSession

__all__ = ["ModelCalls"]

_SAMPLING_KEYS = ("max_tokens", "temperature", "top_p", "stop", "seed")


def _is_control(text: str) -> bool:
    """An added token's text that must not be written by a message (not a plain word)."""
    return len(text) >= 3 and not text.strip().isalnum() and not text.isspace()


def _token_reply(
    text: str,
    sample: Any,
    tokens: tuple[int, ...],
    prompt: list[int],
    request: wire.Request,
    id_prefix: str,
    thinking_opened: bool,
) -> wire.Reply:
    """The reply of one sample: its tool calls when every one parsed, else all its text as text."""
    parsed = parse_reply(
        text, text_action=False, keep_thinking=True, call_id_prefix=id_prefix, thinking_opened=thinking_opened
    )
    action = parsed.action
    calls = list(action.get("tool_calls") or ())
    content = action.get("content", "")
    problems: tuple[str, ...] = ()
    if calls and (parsed.problems or any(call["name"] == UNPARSEABLE_TOOL for call in calls)):
        cut = " (cut by the length limit)" if sample.stop_reason == "length" else ""
        problems = tuple(f"tool call withheld{cut}: {problem}" for problem in parsed.problems) or (
            f"tool call withheld{cut}: no function name",
        )
        calls, content = [], text.strip()
    if calls and request.options.tool_choice == "none":
        problems, calls, content = ("tool call withheld: tool_choice was none",), [], text.strip()
    return wire.Reply(
        content=content,
        tool_calls=calls,
        stop_reason=sample.stop_reason,
        prompt_tokens=len(prompt),
        completion_tokens=len(tokens),
        token_ids=tokens,
        prompt_token_ids=tuple(prompt),
        logprobs=None if sample.logprobs is None else tuple(sample.logprobs),
        problems=problems,
    )


def _canonical(message: Mapping[str, Any]) -> str:
    calls = [(call.get("name", ""), call.get("arguments", {})) for call in message.get("tool_calls") or ()]
    item = [message.get("role"), content_text(message.get("content")).strip(), calls, message.get("tool_call_id")]
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=repr)


class ModelCalls:
    """The policy side of the endpoint (a base of ``InterceptionEndpoint``, which sets ``policy`` and ``force``)."""

    policy: Any
    force: dict[str, Any]
    kept_branches = 16  # the most earlier calls per session a new call may continue token for token

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

    def _prompt(
        self, session: EndpointSession, request: wire.Request, tools_key: str
    ) -> tuple[list[int], bool, list[str]]:
        """The prompt: the recorded tokens of the longest earlier call whose conversation this one
        extends, continued with the new messages (so interleaved calls, a title generator or a
        sub-agent, do not break the main conversation's exact tokens), else the messages rendered."""
        renderer = self.policy.renderer
        canonical = [_canonical(message) for message in request.messages]
        best = None
        for branch in reversed(session.branches):
            history, _, key, _ = branch
            if (
                key != tools_key
                or len(canonical) <= len(history)
                or (best is not None and len(history) <= len(best[0]))
            ):
                continue
            if canonical[: len(history)] == history:
                best = branch
        if best is not None:
            history, context, _, last = best
            tail = renderer.render_continuation(last, request.messages[len(history) :], request.tools)
            prompt = list(context) + list(tail)
        else:
            prompt = list(renderer.render_prompt(request.messages, request.tools))
        contexts = [context for context in (session.context, *session.choices) if context is not None]
        extends = any(prompt[: len(context)] == context for context in contexts)  # n > 1: any choice
        return prompt, extends, canonical

    def _control_pattern(self) -> re.Pattern[str] | None:
        """A pattern of the tokenizer's added-token texts (``<|im_end|>``, ``<tool_call>``, ...)."""
        if not hasattr(self, "_control"):
            tokenizer = getattr(self.policy.renderer, "tokenizer", None)
            added = getattr(tokenizer, "get_added_vocab", None)
            texts = [text for text in (added() if callable(added) else {}) if _is_control(text)]
            texts.sort(key=len, reverse=True)
            self._control = re.compile("|".join(map(re.escape, texts))) if texts else None
        return self._control

    def _neutralised(self, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        """``messages`` with control-token text in what came from outside the model (system, user
        and tool messages) broken by a word joiner, so it is tokenised as text, never as control
        tokens; and how many were broken. The model's own (assistant) messages are kept."""
        pattern = self._control_pattern()
        if pattern is None:
            return messages, 0
        count = 0
        out = []
        for message in messages:
            content = message.get("content")
            if message.get("role") != "assistant" and isinstance(content, str) and pattern.search(content):
                fixed, found = pattern.subn(lambda match: match.group(0)[0] + "\u2060" + match.group(0)[1:], content)
                message, count = {**message, "content": fixed}, count + found
            out.append(message)
        return out, count

    def _fit(self, prompt: list[int], params: SamplingParams) -> SamplingParams:
        """Refuse a prompt past the model's positions; lower ``max_tokens`` to what is left."""
        limit = getattr(self.policy, "max_seq_len", None)
        if limit is None:
            return params
        if len(prompt) >= limit:
            raise wire.Refused(
                400,
                f"prompt is too long: {len(prompt)} tokens, the model's maximum context length is {limit} tokens; "
                "shorten the conversation",
            )
        return replace(params, max_tokens=min(params.max_tokens, limit - len(prompt)))

    def count_tokens(self, request: wire.Request) -> int:
        """The number of prompt tokens ``request`` renders to (nothing is sampled or recorded)."""
        if not hasattr(self.policy, "renderer"):
            raise ConfigError(
                "count_tokens needs a token-level policy (hf:, vllm:, tinker:); a forwarded policy has no renderer here"
            )
        tools = [] if request.options.tool_choice == "none" else request.tools
        messages, _ = self._neutralised(request.messages)
        return len(self.policy.renderer.render_prompt(messages, tools))

    def _prefill(self, request: wire.Request) -> str:
        """The start of the reply the endpoint writes for ``tool_choice`` required or a named function."""
        options = request.options
        if options.tool_choice == "required":
            return "<tool_call>\n"
        if options.tool_choice == "function":
            return "<tool_call>\n" + json.dumps({"name": options.forced_tool})[:-1] + ', "arguments": '
        return ""

    async def _token_call(
        self, session: EndpointSession, request: wire.Request, params: SamplingParams
    ) -> tuple[list[wire.Reply], dict[str, Any]]:
        policy = self.policy
        if request.options.tool_choice == "none":  # the model is not offered the tools
            request = replace(request, tools=[])
        messages, neutralised = self._neutralised(request.messages)
        request = replace(request, messages=messages)
        tools_key = json.dumps(request.tools, sort_keys=True)  # once per call: a CLI's tools are ~100 kB
        prompt, extends, canonical = self._prompt(session, request, tools_key)
        prefill = self._prefill(request)
        if prefill:
            prompt = prompt + list(policy.renderer.encode(prefill))
        params = self._fit(prompt, params)
        replies, texts = [], []
        for choice in range(request.options.n):
            sample = await policy.sampler.sample(prompt, params)
            tokens = tuple(sample.token_ids)
            text = prefill + policy.renderer.decode(tokens)
            ident = f"call_{session.name}_{len(session.calls) + choice}"
            opened = getattr(policy.renderer, "thinking_opened", False)
            reply = _token_reply(text, sample, tokens, prompt, request, ident, opened)
            if neutralised:
                reply.problems = (f"{neutralised} control-token text(s) in the messages kept as text", *reply.problems)
            replies.append(reply)
            texts.append(text)
            action = {"role": "assistant", "content": reply.content}
            if reply.tool_calls:
                action["tool_calls"] = reply.tool_calls
            history = [*canonical, _canonical(action)]
            context = prompt + list(tokens)
            session.branches.append((history, context, tools_key, tokens))
            del session.branches[: -self.kept_branches]
            if choice > 0:
                session.choices.append(context)
            if choice == 0:
                session.choices = []
                first = session.context is None
                new_segment = not first and not extends
                session.context = list(context)
                session.history = list(history)
                session.tools_key = tools_key
                session.last_completion = tokens
        facts = {"extends": extends, "new_segment": new_segment, "text": texts[0], "texts": texts}
        return replies, {
            **facts,
            "messages": request.messages,
            "tools": request.tools,
            "prefill": prefill,
            "params": params,
        }

    async def _message_call(
        self, session: EndpointSession, request: wire.Request, params: SamplingParams
    ) -> tuple[list[wire.Reply], dict[str, Any]]:
        options = request.options
        extra = dict(params.extra)
        if options.tool_choice == "function":
            extra["tool_choice"] = {"type": "function", "function": {"name": options.forced_tool}}
        elif options.tool_choice != "auto" and request.tools:
            extra["tool_choice"] = options.tool_choice
        params = replace(params, extra=extra)
        tools = [] if options.tool_choice == "none" else request.tools
        replies, texts, upstreams = [], [], []
        for _ in range(options.n):
            completion = await self.policy.complete(request.messages, tools, params)
            reply, text = _forwarded_reply(completion, f"call_{session.name}_{len(session.calls) + len(replies)}")
            replies.append(reply)
            texts.append(text)
            upstream = {"usage": dict(completion.usage), "finish_reason": completion.stop_reason}
            upstream.update(
                {key: completion.info[key] for key in ("response_id", "server_model") if key in completion.info}
            )
            upstreams.append(upstream)
        first = replies[0]
        prompt = None if first.prompt_token_ids is None else list(first.prompt_token_ids)
        canonical = [_canonical(message) for message in request.messages]
        if prompt is not None:  # the server gave token ids (vLLM's return_token_ids): compare tokens
            extends = session.context is not None and prompt[: len(session.context)] == session.context
            new_segment = session.context is not None and not extends
            session.context = prompt + list(first.token_ids or ())
        else:  # text only: the call extends when the harness sent back the history the endpoint answered
            history = session.history
            extends = history is not None and len(canonical) > len(history) and canonical[: len(history)] == history
            new_segment = history is not None and not extends
        action: dict[str, Any] = {"role": "assistant", "content": first.content}
        if first.tool_calls:
            action["tool_calls"] = first.tool_calls
        session.history = [*canonical, _canonical(action)]
        facts = {"extends": extends, "new_segment": new_segment, "text": texts[0], "texts": texts}
        return replies, {**facts, "upstream": upstreams[0], "upstreams": upstreams, "messages": request.messages}


def _forwarded_reply(completion: Any, id_prefix: str) -> tuple[wire.Reply, str]:
    """A forwarded completion as a reply: its tool calls, unless the length limit cut the reply
    (then what it said, calls included, is handed out as text)."""
    if completion.message is not None:
        from rolloutgym.llm.messages import from_openai_message

        action, _ = from_openai_message(completion.message)
    else:
        action = parse_reply(
            completion.text or "", text_action=False, keep_thinking=True, call_id_prefix=id_prefix
        ).action
    calls = list(action.get("tool_calls") or ())
    content = action.get("content", "") or ""
    cut = completion.stop_reason == "length"
    problems: tuple[str, ...] = ()
    if calls and cut:
        problems = ("tool call withheld (cut by the length limit)",)
        written = "".join(f"<tool_call>{json.dumps({'name': c['name'], 'arguments': c['arguments']})}" for c in calls)
        calls, content = [], content + written
    usage = dict(completion.usage)
    prompt = None if completion.prompt_tokens is None else tuple(completion.prompt_tokens)
    tokens = None if completion.tokens is None else tuple(completion.tokens)
    reply = wire.Reply(
        content=content,
        tool_calls=calls,
        stop_reason="length" if cut else "stop",
        prompt_tokens=int(usage.get("prompt_tokens", len(prompt or ()))),
        completion_tokens=int(usage.get("completion_tokens", len(tokens or ()))),
        token_ids=tokens,
        prompt_token_ids=prompt,
        logprobs=None if completion.logprobs is None else tuple(completion.logprobs),
        problems=problems,
    )
    return reply, completion.text if completion.text is not None else reply.content
