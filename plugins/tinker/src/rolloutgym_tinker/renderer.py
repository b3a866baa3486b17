"""A tinker-cookbook renderer as a :class:`rolloutgym.llm.Renderer`.

tinker-cookbook renderers (``qwen3``, ``llama3``, ``deepseekv3``, ``kimi_k2``,
``gpt_oss_*``, ``role_colon``...) turn messages into ``tinker.ModelInput`` prompts, name the
stop sequences of their format, and parse sampled tokens back into a message with tool
calls. :class:`CookbookRenderer` uses all three:

* ``render_prompt``: ``build_generation_prompt`` (tools through
  ``create_conversation_prefix_with_tools``);
* ``render_continuation``: the tokens that follow an assistant turn, found by rendering a
  placeholder assistant message followed by the new messages and keeping what comes after
  the placeholder; the part the model already emitted (its stop token or stop string) is
  not repeated. History is never re-rendered, so sampled tokens stay verbatim;
* ``decode``: ``parse_response``, re-expressed in one neutral text form (``<think>`` blocks,
  text, Hermes ``<tool_call>`` blocks carrying the model's own call ``id``, which the tool
  result then answers) that the LLM loop parses, whatever the model's own tool-call format
  is. Empty thinking blocks are left out of the decoded text; the sampled tokens (an empty
  ``<think></think>`` included) stay in the history verbatim, where the cookbook's own
  re-rendering of a finished conversation would drop them: train on the recorded tokens.

Errors the cookbook raises while rendering become :class:`ConfigError` naming the renderer
and the fix; a reply the renderer cannot parse is handed to the loop as raw text (an
invalid action, never a crash).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym.llm import content_text
from rolloutgym_protocol.errors import ConfigError, PolicyError

__all__ = ["CookbookRenderer", "load_cookbook_renderer"]

_PLACEHOLDER = "\u2063ROLLOUTGYM-ASSISTANT-TURN\u2063"


def load_cookbook_renderer(name: str | None, tokenizer: Any, model: str | None = None) -> Any:
    """``tinker_cookbook.renderers.get_renderer(name, tokenizer)``; ``name=None`` picks the model's recommended one.

    Raises:
        PolicyError: tinker-cookbook is not installed.
        ConfigError: no such renderer, or no recommendation for ``model``.
    """
    try:
        from tinker_cookbook import renderers
    except ImportError as exc:
        raise PolicyError(
            f"tinker-cookbook renderers need the 'tinker-cookbook' package ({exc}): "
            f"{pip_install('rolloutgym-tinker', 'cookbook')}; or leave --policy-arg renderer unset to use the "
            "model's own chat template"
        ) from None
    if name is None:
        try:
            from tinker_cookbook.model_info import get_recommended_renderer_name

            name = get_recommended_renderer_name(model or "")
        except Exception as exc:  # unknown model: KeyError/ValueError depending on the version
            raise ConfigError(
                f"tinker-cookbook has no recommended renderer for {model!r} ({exc}); pass --policy-arg renderer=NAME"
            ) from None
    try:
        return renderers.get_renderer(name, tokenizer, model_name=model)
    except Exception as exc:
        raise ConfigError(f"tinker-cookbook renderer {name!r}: {exc}") from None


def _tool_spec(tool: Mapping[str, Any]) -> dict[str, Any]:
    function = tool.get("function", tool)
    return {
        "name": function.get("name", ""),
        "description": function.get("description", ""),
        "parameters": function.get("parameters") or {"type": "object", "properties": {}},
    }


class CookbookRenderer:
    """Adapts a tinker-cookbook ``Renderer`` to rolloutgym's incremental ``Renderer`` protocol.

    Args:
        renderer: a ``tinker_cookbook.renderers.Renderer``.

    Attributes:
        stop_token_ids: the renderer's stop sequences that are token ids.
        stop_strings: the renderer's stop sequences that are strings (pass them as the
            policy's ``stop``; :func:`rolloutgym_tinker.make_policy` does).
        thinking_opened: the generation prompt ends inside an opened ``<think>`` block.
    """

    def __init__(self, renderer: Any) -> None:
        self.renderer = renderer
        self.tokenizer = renderer.tokenizer
        stops = list(renderer.get_stop_sequences())
        self.stop_token_ids: tuple[int, ...] = tuple(int(stop) for stop in stops if isinstance(stop, int))
        self.stop_strings: tuple[str, ...] = tuple(stop for stop in stops if isinstance(stop, str))
        probe = self.render_prompt([{"role": "user", "content": "."}], [])
        self.thinking_opened = self._text(probe).rstrip().endswith("<think>")
        self._placeholder = list(self.tokenizer.encode(_PLACEHOLDER, add_special_tokens=False))
        # Tool names of the calls decoded so far, by call id: a tool result names its tool
        # (kimi_k2 renders the name) although envs answer with the call id only.
        self._call_names: dict[str, str] = {}

    def _text(self, tokens: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(tokens), skip_special_tokens=False))

    def _message(self, message: Mapping[str, Any]) -> dict[str, Any]:
        from tinker_cookbook.renderers import ToolCall

        item: dict[str, Any] = {"role": message["role"], "content": content_text(message.get("content"))}
        for key in ("tool_call_id", "name"):
            if isinstance(message.get(key), str):
                item[key] = message[key]
        if item["role"] == "tool" and "name" not in item and item.get("tool_call_id") in self._call_names:
            item["name"] = self._call_names[item["tool_call_id"]]
        calls = message.get("tool_calls") or []
        if calls:
            item["tool_calls"] = [
                ToolCall(
                    id=call.get("id"),
                    function=ToolCall.FunctionBody(
                        name=str(call.get("name", "")), arguments=json.dumps(call.get("arguments", {}))
                    ),
                )
                for call in calls
            ]
        return item

    def _conversation(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[Any]:
        converted = [self._message(message) for message in messages]
        if not tools:
            return converted
        system = ""
        if converted and converted[0]["role"] == "system":
            system = str(converted.pop(0)["content"])
        try:
            prefix = self.renderer.create_conversation_prefix_with_tools([_tool_spec(tool) for tool in tools], system)
        except NotImplementedError:
            raise PolicyError(
                f"the tinker-cookbook renderer {type(self.renderer).__name__} has no tool-calling format, and this "
                "environment has tools; choose another with --policy-arg renderer=NAME (e.g. qwen3, llama3)"
            ) from None
        return list(prefix) + converted

    def _build(self, conversation: list[Any]) -> list[int]:
        try:
            return list(self.renderer.build_generation_prompt(conversation).to_ints())
        except (ValueError, TypeError, KeyError, AssertionError, NotImplementedError) as exc:
            roles = ", ".join(
                sorted({str(message.get("role")) for message in conversation if isinstance(message, Mapping)})
            )
            raise ConfigError(
                f"the tinker-cookbook renderer {type(self.renderer).__name__} cannot render this conversation "
                f"(roles: {roles}): {type(exc).__name__}: {str(exc).rstrip('.')}. Choose a renderer that fits the "
                "model and the "
                "environment with --policy-arg renderer=NAME, or renderer=template for the tokenizer's chat template"
            ) from None

    def render_prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> list[int]:
        """The tokens of the first prompt, ending with the assistant's generation prompt."""
        return self._build(self._conversation(messages, tools))

    def render_continuation(
        self,
        sampled_tokens: Sequence[int],
        new_messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
    ) -> list[int]:
        """The tokens after the sampled turn: the rest of its envelope, ``new_messages``, the generation prompt."""
        context = [{"role": "user", "content": "."}, {"role": "assistant", "content": _PLACEHOLDER}]
        conversation = context + [self._message(message) for message in new_messages]
        full = self._build(conversation)
        tail = self._after_placeholder(full)
        return self._without_emitted_stop(list(sampled_tokens), tail)

    def _after_placeholder(self, tokens: list[int]) -> list[int]:
        marker = self._placeholder
        for start in range(len(tokens) - len(marker), -1, -1):
            if tokens[start : start + len(marker)] == marker:
                return tokens[start + len(marker) :]
        # The marker merged with its neighbours: find where its text ends instead.
        for end in range(1, len(tokens) + 1):
            if _PLACEHOLDER in self._text(tokens[:end]):
                return tokens[end:]
        raise PolicyError(
            f"{type(self.renderer).__name__}: could not locate the assistant turn while rendering a continuation"
        )

    def _without_emitted_stop(self, sampled: list[int], tail: list[int]) -> list[int]:
        if sampled and tail and sampled[-1] in self.stop_token_ids and tail[0] == sampled[-1]:
            return tail[1:]
        if self.stop_strings and sampled:
            sampled_text = self._text(sampled)
            for stop in self.stop_strings:
                if sampled_text.endswith(stop):
                    # The model already wrote the stop string (e.g. "\n\nUser:"): skip the
                    # tail tokens that spell it.
                    for count in range(1, len(tail) + 1):
                        if self._text(tail[:count]) == stop:
                            return tail[count:]
        return tail

    def decode(self, tokens: Sequence[int]) -> str:
        """The reply as text: ``<think>`` blocks, text and Hermes ``<tool_call>`` blocks, via ``parse_response``."""
        try:
            message, _termination = self.renderer.parse_response(list(tokens))
        except (ValueError, TypeError, KeyError, AssertionError):
            # What the model wrote is the model's problem, not a crash: hand the raw text to
            # the loop, which records malformed tool calls as invalid actions.
            return self._text(tokens)
        pieces: list[str] = []
        content = message.get("content")
        if isinstance(content, str):
            pieces.append(content)
        else:
            for part in content or []:
                if part.get("type") == "thinking":
                    if str(part.get("thinking", "")).strip():  # an empty block says nothing
                        pieces.append(f"<think>{part.get('thinking', '')}</think>")
                elif part.get("type") == "text":
                    pieces.append(str(part.get("text", "")))
        for call in message.get("tool_calls") or []:
            try:
                arguments: Any = json.loads(call.function.arguments)
            except json.JSONDecodeError:
                arguments = call.function.arguments  # left as a string: the loop reports it as invalid
            fields: dict[str, Any] = {"name": call.function.name, "arguments": arguments}
            if getattr(call, "id", None):
                fields["id"] = call.id  # the tool result answers this id (kimi_k2 renders it)
                self._call_names[call.id] = call.function.name
            payload = json.dumps(fields, ensure_ascii=False)
            pieces.append(f"<tool_call>\n{payload}\n</tool_call>")
        for unparsed in message.get("unparsed_tool_calls") or []:
            pieces.append(unparsed.raw_text)
        return "".join(pieces)
