"""The ``openai`` policy: any OpenAI-compatible chat-completions server drives any chat env.

``--policy openai:MODEL`` talks to OpenAI by default; ``--base-url`` points it at vLLM's
server, SGLang, llama.cpp's server or anything else that speaks
``POST /v1/chat/completions``. The conversation, tool definitions, reply parsing (OpenAI
tool calls or Hermes ``<tool_call>`` blocks), invalid-action counters and per-trajectory
usage come from :class:`rolloutgym.llm.ChatPolicy`; this module sends the requests.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from rolloutgym.llm import ChatPolicy, Completion, SamplingParams, parse_reply, to_openai_messages
from rolloutgym.llm.http import RetrySettings, ServerRefused
from rolloutgym_protocol.errors import ConfigError, PolicyError

from ._http import AiohttpJSONClient

__all__ = ["DEFAULT_BASE_URL", "OpenAIChatPolicy", "make_policy"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_TOKEN_ID = re.compile(r"^token_id:(\d+)$")
_log = logging.getLogger("rolloutgym.openai")
# Requests that offered tools, answered without any tool call, before the adapter warns
# that the server may ignore tools.
TOOLS_IGNORED_WARN_AFTER = 4
_LLAMA_CPP_FINGERPRINT = re.compile(r"^b\d+")  # llama.cpp's server: "system_fingerprint": "b5000-1a2b3c"
_TEXT_TOOL_CALL = re.compile(r"<tool_call>|<\|tool_call|\[TOOL_CALLS\]|<function[=>]")


def _calls_tools(message: Mapping[str, Any] | None) -> bool:
    """The env gets a tool call from this reply: ``tool_calls``, or ``<tool_call>`` blocks in the text
    (which the chat policy reads itself)."""
    if not message:
        return False
    if message.get("tool_calls"):
        return True
    return _reads_hermes_calls(message.get("content"))


def _reads_hermes_calls(content: Any) -> bool:
    """``content`` holds ``<tool_call>`` blocks the chat policy turns into calls."""
    if not isinstance(content, str) or "<tool_call>" not in content:
        return False
    return bool(parse_reply(content, text_action=False).action.get("tool_calls"))


def _looks_like_llama_cpp(response: Mapping[str, Any]) -> bool:
    """llama.cpp's server by its answer: a ``timings`` object, or a ``b<build>`` system fingerprint."""
    fingerprint = response.get("system_fingerprint")
    return isinstance(response.get("timings"), Mapping) or (
        isinstance(fingerprint, str) and bool(_LLAMA_CPP_FINGERPRINT.match(fingerprint))
    )


def _tool_call_as_text(content: Any, tools: Sequence[Mapping[str, Any]]) -> str | None:
    """The text of a reply that writes a tool call instead of sending ``tool_calls`` (a server that
    does not parse tool calls for this model), or None."""
    if not isinstance(content, str) or not content.strip() or _reads_hermes_calls(content):
        return None
    if _TEXT_TOOL_CALL.search(content):
        return content.strip()[:80]
    names = {str((tool.get("function") or tool).get("name")) for tool in tools if isinstance(tool, Mapping)}
    start = content.find("{")
    if start < 0:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(content[start:])
    except json.JSONDecodeError:
        return None
    if isinstance(data, Mapping) and data.get("name") in names and ("arguments" in data or "parameters" in data):
        return content.strip()[:80]
    return None


def _is_openai(base_url: str) -> bool:
    return (urlparse(base_url).hostname or "").endswith("openai.com")


class OpenAIChatPolicy(ChatPolicy):
    """A :class:`~rolloutgym.llm.ChatPolicy` over ``POST {base_url}/chat/completions``.

    Args:
        model: the model name the server knows.
        base_url: the API root (default ``$OPENAI_BASE_URL``, else OpenAI's).
        api_key: the bearer token (default ``$OPENAI_API_KEY``); needed for OpenAI itself,
            optional for local servers.
        timeout: seconds one request may take before it is retried.
        max_retries: retries on connection errors, timeouts, 429 and 5xx (exponential
            backoff with jitter, or the server's ``Retry-After``).
        max_concurrency: requests in flight at once (per event loop), across episodes.
        logprobs: ``None`` asks for logprobs and stops asking when the server refuses
            them; ``True`` always asks; ``False`` never does. A request that asks sends
            ``logprobs: true`` with ``top_logprobs`` (some servers, e.g. llama-cpp-python's,
            return none without it); the adapter warns once when they never come back.
        top_logprobs: alternatives per token asked for with ``logprobs`` (default 1).
        tool_choice: sent as is when the env has tools (``"auto"``, ``"required"``, ...).
            The adapter warns once when tools were offered in several requests and the
            server never called one (a server whose chat format ignores tools), and at
            once when a reply writes a tool call as text. A llama.cpp server (known by its
            answer's ``timings``) that answers offered tools without a call while no
            tool_choice is set is asked again with ``"auto"``, and from then on (with a warning).
        parallel_tool_calls: sent when not None and the env has tools.
        return_token_ids: ask vLLM's server for the sampled and prompt token ids
            (``return_token_ids``); then steps record tokens, not only logprobs.
        max_tokens_field: ``"max_tokens"`` or ``"max_completion_tokens"`` (default: the
            latter for OpenAI, the former elsewhere).
        extra_body: more request fields, sent verbatim (``{"top_k": 20}``).
        headers: more request headers.
        **chat_options: :class:`~rolloutgym.llm.ChatPolicy` options (``max_tokens``,
            ``max_turns``, ``temperature``, ``greedy``, ``top_p``, ``stop``, ``seed``, ...).

    Raises:
        ConfigError: a malformed ``base_url`` or option.
        PolicyError: OpenAI's API without an API key.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = 120.0,
        max_retries: int = 4,
        max_concurrency: int = 32,
        logprobs: bool | None = None,
        top_logprobs: int = 1,
        tool_choice: Any = None,
        parallel_tool_calls: bool | None = None,
        return_token_ids: bool = False,
        max_tokens_field: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        **chat_options: Any,
    ) -> None:
        chat_options.setdefault("name", model)
        super().__init__(**chat_options)
        if not model:
            raise ConfigError("the openai policy needs a model name: --policy openai:MODEL (e.g. openai:gpt-4o-mini)")
        self.model = model
        resolved_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        parsed = urlparse(resolved_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ConfigError(
                f"base_url {resolved_url!r} is not an http(s) URL; pass e.g. --base-url http://127.0.0.1:8000/v1"
            )
        self.base_url = resolved_url.rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key and _is_openai(self.base_url):
            raise PolicyError(
                f"openai:{model} needs an API key for {self.base_url}: set OPENAI_API_KEY or pass "
                "--policy-arg api_key=KEY (a local server needs none: pass --base-url http://HOST:PORT/v1)"
            )
        if max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {max_retries}")
        if max_tokens_field not in (None, "max_tokens", "max_completion_tokens"):
            raise ConfigError(
                f"max_tokens_field must be 'max_tokens' or 'max_completion_tokens', got {max_tokens_field!r}"
            )
        self.max_tokens_field = max_tokens_field or (
            "max_completion_tokens" if _is_openai(self.base_url) else "max_tokens"
        )
        self.logprobs = logprobs
        self._ask_logprobs = logprobs is not False
        if not 0 <= top_logprobs <= 20:
            raise ConfigError(f"top_logprobs must be between 0 and 20, got {top_logprobs}")
        self.top_logprobs = top_logprobs
        self._logprobs_seen = False
        self._logprobs_warned = False
        self._tool_requests_without_calls = 0
        self._tools_called = False
        self._tools_warned = False
        self._text_calls_warned = False
        self._tool_choice_switched = False
        self.tool_choice = tool_choice
        self.parallel_tool_calls = parallel_tool_calls
        self.return_token_ids = return_token_ids
        self.extra_body = dict(extra_body or {})
        self.client = AiohttpJSONClient(
            self.base_url,
            api_key=key or None,
            timeout=timeout,
            max_concurrency=max_concurrency,
            retry=RetrySettings(max_retries=max_retries),
            headers=headers,
        )

    def request_body(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], params: SamplingParams
    ) -> dict[str, Any]:
        """The JSON body of one chat-completions request."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages),
            self.max_tokens_field: params.max_tokens,
            "temperature": params.temperature,
        }
        if params.top_p < 1.0:
            body["top_p"] = params.top_p
        if params.stop:
            body["stop"] = list(params.stop)
        if params.seed is not None:
            body["seed"] = params.seed
        if tools:
            body["tools"] = [dict(tool) for tool in tools]
            if self.tool_choice is not None:
                body["tool_choice"] = self.tool_choice
            if self.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self.parallel_tool_calls
        if self._ask_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        if self.return_token_ids:
            body["return_token_ids"] = True
        body.update(self.extra_body)
        body.update(params.extra)
        return body

    async def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], params: SamplingParams
    ) -> Completion:
        """Send one request (retrying as configured) and turn the answer into a :class:`Completion`."""
        started = time.perf_counter()
        try:
            response = await self.client.post("/chat/completions", self.request_body(messages, tools, params))
        except ServerRefused as exc:
            if not (
                self.logprobs is None
                and self._ask_logprobs
                and exc.status == 400
                and "logprob" in exc.server_message.lower()
            ):
                raise
            self._ask_logprobs = False  # the server does not offer logprobs: stop asking
            response = await self.client.post("/chat/completions", self.request_body(messages, tools, params))
        if self._tools_dropped_by_llama_cpp(response, tools):
            # llama.cpp answers tools without tool_choice with plain text: ask again with "auto".
            response = await self.client.post("/chat/completions", self.request_body(messages, tools, params))
        completion = parse_response(response, self.base_url, latency=time.perf_counter() - started)
        self._notice(completion, offered_tools=bool(tools))
        if tools and not self._tools_called and not self._text_calls_warned:
            written = _tool_call_as_text((completion.message or {}).get("content"), tools)
            if written is not None:
                self._text_calls_warned = True
                _log.warning(
                    "openai:%s: the server at %s wrote a tool call as text (%r) instead of sending tool_calls, so "
                    "the env sees no call; start the server with tool-call parsing for this model (llama.cpp: "
                    "--jinja; vLLM: --enable-auto-tool-choice --tool-call-parser NAME) or pass --policy-arg "
                    "tool_choice=auto",
                    self.model,
                    self.base_url,
                    written,
                )
        return completion

    def _tools_dropped_by_llama_cpp(self, response: Mapping[str, Any], tools: Sequence[Mapping[str, Any]]) -> bool:
        """True (once) when a llama.cpp server answered offered tools without a call and no
        ``tool_choice`` was set: from then on the adapter sends ``tool_choice="auto"`` and says so."""
        if not tools or self.tool_choice is not None or self._tools_called or self._tool_choice_switched:
            return False
        if not _looks_like_llama_cpp(response):
            return False
        choices = response.get("choices")
        message = choices[0].get("message") if isinstance(choices, list) and choices else None
        if not isinstance(message, Mapping) or message.get("tool_calls"):
            return False
        self._tool_choice_switched = True
        self.tool_choice = "auto"
        _log.warning(
            "openai:%s: the llama.cpp server at %s answered without calling the offered tools (llama.cpp drops "
            "them when no tool_choice is sent); sending tool_choice=auto from now on (pass --policy-arg "
            "tool_choice=VALUE to choose another)",
            self.model,
            self.base_url,
        )
        return True

    def _notice(self, completion: Completion, *, offered_tools: bool) -> None:
        """Warn once about silent degradations: logprobs never returned, tools never called."""
        if completion.logprobs is not None:
            self._logprobs_seen = True
        elif self._ask_logprobs and not self._logprobs_seen and not self._logprobs_warned:
            self._logprobs_warned = True
            _log.warning(
                "openai:%s: logprobs were requested but the server at %s returned none; trajectories "
                "will have no per-token logprobs (pass --policy-arg logprobs=false to stop asking)",
                self.model,
                self.base_url,
            )
        if not offered_tools or self._tools_called:
            return
        if _calls_tools(completion.message):
            self._tools_called = True
            return
        self._tool_requests_without_calls += 1
        if self._tool_requests_without_calls >= TOOLS_IGNORED_WARN_AFTER and not self._tools_warned:
            self._tools_warned = True
            _log.warning(
                "openai:%s: the server at %s was offered tools in %d requests and never called one; "
                "if it ignores tools (llama-cpp-python's default chat format does), start it with a "
                "function-calling chat format, or try --policy-arg tool_choice=auto / required",
                self.model,
                self.base_url,
                self._tool_requests_without_calls,
            )


def _token_ids_from_logprobs(entries: Sequence[Mapping[str, Any]]) -> list[int] | None:
    ids = []
    for entry in entries:
        match = _TOKEN_ID.match(str(entry.get("token", "")))
        if match is None:
            return None
        ids.append(int(match.group(1)))
    return ids


def parse_response(response: Mapping[str, Any], base_url: str, *, latency: float = 0.0) -> Completion:
    """Turn a chat-completions response body into a :class:`Completion`.

    Raises:
        PolicyError: the body has no choice or no message.
    """
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise PolicyError(f"the server at {base_url} answered without choices: {str(response)[:300]}")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise PolicyError(f"the server at {base_url} answered a choice without a message: {str(choice)[:300]}")
    logprobs: list[float] | None = None
    tokens: list[int] | None = None
    entries = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), Mapping) else None
    if isinstance(entries, list) and entries:
        logprobs = [float(entry.get("logprob", 0.0)) for entry in entries if isinstance(entry, Mapping)]
        tokens = _token_ids_from_logprobs(entries)
    if isinstance(choice.get("token_ids"), list):
        tokens = [int(token) for token in choice["token_ids"]]
    info: dict[str, Any] = {"finish_reason": choice.get("finish_reason"), "latency_s": round(latency, 6)}
    if response.get("id"):
        info["response_id"] = response["id"]
    if response.get("model"):
        info["server_model"] = response["model"]
    if tokens is not None and logprobs is not None and len(tokens) != len(logprobs):
        info["logprobs_unaligned"] = logprobs  # kept, but not passed off as per-token logprobs
        logprobs = None
    raw_usage = response.get("usage")
    usage_raw: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
    usage = {
        key: int(value) for key, value in usage_raw.items() if isinstance(value, int) and not isinstance(value, bool)
    }
    prompt_ids = response.get("prompt_token_ids")
    prompt_tokens = [int(token) for token in prompt_ids] if isinstance(prompt_ids, list) else None
    return Completion(
        message=dict(message),
        tokens=tokens,
        logprobs=logprobs,
        prompt_tokens=prompt_tokens if tokens is not None else None,
        stop_reason=choice.get("finish_reason"),
        usage=usage,
        info=info,
    )


def make_policy(model: str | None = None, **options: Any) -> OpenAIChatPolicy:
    """The ``openai`` provider's factory: ``--policy openai:MODEL [--base-url URL] [--policy-arg KEY=VALUE]``."""
    if not model:
        raise ConfigError("the openai policy needs a model name: --policy openai:MODEL (e.g. openai:gpt-4o-mini)")
    known = _option_names()
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(
            f"openai policy: unknown option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}"
        )
    return OpenAIChatPolicy(model, **options)


def _option_names() -> set[str]:
    names = set()
    for cls in (OpenAIChatPolicy, ChatPolicy):
        for parameter in inspect.signature(cls.__init__).parameters.values():
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
                names.add(parameter.name)
    return names
