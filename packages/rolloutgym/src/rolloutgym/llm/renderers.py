"""Renderers: chat messages to prompt token ids, turn by turn, without re-tokenising history.

A :class:`Renderer` produces the tokens of the first prompt, and then, each turn, only the
tokens to *append* after what the model sampled: the end of the assistant turn when the
model did not emit it, the new environment messages in the chat envelope, and the next
generation prompt. History is never rendered again, so the tokens the model sampled stay
in its context verbatim (the usual source of train/sample mismatch is re-tokenising the
decoded history).

:class:`ChatTemplateRenderer` does this for any Hugging Face tokenizer with a chat
template. It finds the continuation by rendering a conversation whose last assistant
message is a unique placeholder and taking what the template writes after it, so it works
with templates that rewrite earlier turns (Qwen3 drops old thinking) and wraps tool
results in their own envelope (Qwen's ``<tool_response>`` inside a user turn).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from rolloutgym_protocol.errors import ConfigError

from .messages import content_text

__all__ = ["CHATML_TEMPLATE", "ChatTemplateRenderer", "Renderer", "hermes_tool_prompt"]

_PLACEHOLDER = "\u2063ROLLOUTGYM-ASSISTANT-TURN\u2063"

CHATML_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n"
    "{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
    "{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}{{ '\\n</tools>\\n\\n' }}"
    "For each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
    "<args-json-object>}\n</tool_call>"
    "<|im_end|>\n"
    "{% elif messages[0].role == 'system' %}<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'system' and loop.first %}"
    "{% elif message.role == 'tool' %}"
    "{% if loop.first or loop.previtem.role != 'tool' %}<|im_start|>user{% endif %}"
    "{{ '\\n<tool_response>\\n' }}{{ message.content }}\n</tool_response>"
    "{% if loop.last or loop.nextitem.role != 'tool' %}<|im_end|>\n{% endif %}"
    "{% else %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "{% if message.tool_calls %}{% for call in message.tool_calls %}{{ '\\n<tool_call>\\n' }}"
    '{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}\n</tool_call>'
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""A ChatML template with Hermes tool calls and Qwen-style tool-response envelopes; used
for tokenizers that have no chat template of their own. (Hugging Face renders templates
with ``trim_blocks``, so a newline right after a block tag is written as ``{{ '\\n' }}``.)"""


def hermes_tool_prompt(tools: Sequence[Mapping[str, Any]]) -> str:
    """Instructions that describe ``tools`` in the Hermes format, for templates without tool support."""
    lines = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        f"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{lines}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within "
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
        "<args-json-object>}\n</tool_call>"
    )


@runtime_checkable
class Renderer(Protocol):
    """Turns chat messages into the token ids a model conditions on, incrementally.

    Attributes:
        stop_token_ids: token ids that end an assistant turn.
        thinking_opened: the generation prompt opens a ``<think>`` block.
    """

    stop_token_ids: tuple[int, ...]
    thinking_opened: bool

    def render_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[int]:
        """The tokens of the first prompt, ending with the generation prompt."""
        ...

    def render_continuation(
        self,
        sampled_tokens: Sequence[int],
        new_messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
    ) -> list[int]:
        """The tokens to append after ``sampled_tokens`` (the previous assistant turn,
        verbatim): the rest of that turn's envelope, ``new_messages`` and the next
        generation prompt."""
        ...

    def decode(self, tokens: Sequence[int]) -> str:
        """The reply text of sampled tokens, special tokens kept (so ``<tool_call>``
        survives) except a trailing end-of-turn marker."""
        ...


def _template_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message in the shape Hugging Face chat templates expect."""
    item: dict[str, Any] = {"role": message["role"], "content": content_text(message.get("content"))}
    for key in ("tool_call_id", "name"):
        if key in message:
            item[key] = message[key]
    calls = message.get("tool_calls")
    if calls:
        item["tool_calls"] = [
            {
                "id": call.get("id", f"call_{index}"),
                "type": "function",
                "function": {"name": call.get("name", ""), "arguments": call.get("arguments", {})},
            }
            for index, call in enumerate(calls)
        ]
    return item


class ChatTemplateRenderer:
    """A :class:`Renderer` over a Hugging Face tokenizer and its chat template.

    Args:
        tokenizer: a ``transformers`` tokenizer (anything with ``apply_chat_template``,
            ``encode``, ``decode``, ``convert_tokens_to_ids``).
        chat_template: a template to use instead of the tokenizer's (default: the
            tokenizer's own, else :data:`CHATML_TEMPLATE`).
        stop_token_ids: end-of-turn token ids (default: the EOS token plus
            ``<|im_end|>``/``<|eot_id|>``/``<|end|>`` when the vocabulary has them).
        tool_prompt: ``"auto"`` describes tools in the system prompt (Hermes format) when
            the template ignores the ``tools`` argument; ``"template"`` always leaves it to
            the template; ``"system"`` always uses the Hermes system prompt.
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        chat_template: str | None = None,
        stop_token_ids: Sequence[int] | None = None,
        tool_prompt: str = "auto",
    ) -> None:
        if tool_prompt not in ("auto", "template", "system"):
            raise ConfigError(f"tool_prompt must be 'auto', 'template' or 'system', got {tool_prompt!r}")
        self.tokenizer = tokenizer
        backend = getattr(tokenizer, "backend_tokenizer", None)
        self._backend = backend if callable(getattr(backend, "encode", None)) else None
        self.chat_template = chat_template or (None if getattr(tokenizer, "chat_template", None) else CHATML_TEMPLATE)
        self.tool_prompt = tool_prompt
        self.cache_size = 1024
        self._cache: OrderedDict[str, list[int]] = OrderedDict()
        self.stop_token_ids = tuple(stop_token_ids) if stop_token_ids is not None else self._default_stop_ids()
        self._stop_texts = {
            token: tokenizer.decode([token], skip_special_tokens=False) for token in self.stop_token_ids
        }
        self._template_tools: dict[str, bool] = {}
        probe = self._render_text([{"role": "user", "content": "x"}], [], add_generation_prompt=True)
        self.thinking_opened = probe.rstrip().endswith("<think>")

    def _default_stop_ids(self) -> tuple[int, ...]:
        ids: list[int] = []
        eos = getattr(self.tokenizer, "eos_token_id", None)
        if isinstance(eos, int):
            ids.append(eos)
        vocabulary = self.tokenizer.get_vocab() if hasattr(self.tokenizer, "get_vocab") else {}
        for marker in ("<|im_end|>", "<|eot_id|>", "<|end|>", "<|endoftext|>", "<end_of_turn>"):
            token = vocabulary.get(marker)
            if token is not None and token not in ids:
                ids.append(token)
        if not ids:
            raise ConfigError("the tokenizer has no EOS token; pass stop_token_ids= to ChatTemplateRenderer")
        return tuple(ids)

    def _template_handles_tools(self, tools: Sequence[Mapping[str, Any]]) -> bool:
        key = json.dumps(tools, sort_keys=True, default=repr)
        if key not in self._template_tools:
            probe = [{"role": "user", "content": "x"}]
            self._template_tools[key] = self._apply(probe, tools, False) != self._apply(probe, [], False)
        return self._template_tools[key]

    def _apply(
        self, messages: list[dict[str, Any]], tools: Sequence[Mapping[str, Any]], add_generation_prompt: bool
    ) -> str:
        try:
            return self.tokenizer.apply_chat_template(
                messages,
                tools=list(tools) or None,
                tokenize=False,
                add_generation_prompt=add_generation_prompt,
                chat_template=self.chat_template,
            )
        except Exception as exc:  # template errors are user-facing: say which template and why
            raise ConfigError(
                f"the chat template failed to render {[message['role'] for message in messages]} "
                f"({type(exc).__name__}: {exc}); pass chat_template= (e.g. rolloutgym.llm.CHATML_TEMPLATE)"
            ) from exc

    def _render_text(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool
    ) -> str:
        prepared = [_template_message(message) for message in messages]
        tools = list(tools)
        if tools and (
            self.tool_prompt == "system" or (self.tool_prompt == "auto" and not self._template_handles_tools(tools))
        ):
            instructions = hermes_tool_prompt(tools)
            if prepared and prepared[0]["role"] == "system":
                prepared[0] = {**prepared[0], "content": f"{prepared[0]['content']}\n\n{instructions}"}
            else:
                prepared.insert(0, {"role": "system", "content": instructions})
            tools = []
        return self._apply(prepared, tools, add_generation_prompt)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special tokens in it are recognised; no BOS added)."""
        if self._backend is not None:  # the Rust tokenizer directly: same ids, less Python
            return self._backend.encode(text, add_special_tokens=False).ids
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _cached(self, key: tuple[Any, ...], render: Any) -> list[int]:
        """Rendering is deterministic; group members share prompts and envs repeat
        observations, so remember recent results (a small LRU of token lists)."""
        try:
            text_key = json.dumps(key, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError):  # not JSON (odd content): render without caching
            return render()
        tokens = self._cache.get(text_key)
        if tokens is None:
            tokens = render()
            self._cache[text_key] = tokens
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(text_key)
        return list(tokens)

    def render_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[int]:
        return self._cached(
            ("prompt", messages, tools),
            lambda: self.encode(self._render_text(messages, tools, add_generation_prompt=True)),
        )

    def continuation_text(
        self,
        sampled_tokens: Sequence[int],
        new_messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
    ) -> str:
        """The text :meth:`render_continuation` tokenises."""
        conversation = [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": _PLACEHOLDER},
            *new_messages,
        ]
        text = self._render_text(conversation, tools, add_generation_prompt=True)
        position = text.rfind(_PLACEHOLDER)
        if position < 0:
            raise ConfigError("the chat template dropped the assistant message; pass chat_template= to the renderer")
        suffix = text[position + len(_PLACEHOLDER) :]
        if sampled_tokens and sampled_tokens[-1] in self._stop_texts:
            # The model already closed its turn: skip the part of the envelope it wrote.
            marker = self._stop_texts[sampled_tokens[-1]]
            stripped = suffix.lstrip(" ")
            if stripped.startswith(marker):
                suffix = stripped[len(marker) :]
        return suffix

    def render_continuation(
        self,
        sampled_tokens: Sequence[int],
        new_messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
    ) -> list[int]:
        closed = bool(sampled_tokens) and sampled_tokens[-1] in self._stop_texts
        return self._cached(
            ("continuation", sampled_tokens[-1] if closed else None, new_messages, tools),
            lambda: self.encode(self.continuation_text(sampled_tokens, new_messages, tools)),
        )

    def decode(self, tokens: Sequence[int]) -> str:
        end = len(tokens)
        while end and tokens[end - 1] in self._stop_texts:
            end -= 1
        return self.tokenizer.decode(list(tokens[:end]), skip_special_tokens=False)

    def decode_text(self, tokens: Sequence[int]) -> str:
        """The reply text with special tokens removed (``StructuredToolUseConfig(decode_skip_special_tokens=True)``)."""
        return self.tokenizer.decode(list(tokens), skip_special_tokens=True)
