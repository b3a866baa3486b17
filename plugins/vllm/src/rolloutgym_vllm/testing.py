"""Test helpers: a local server speaking vLLM's ``/v1/completions`` wire format, and a tiny tokenizer.

:class:`CompletionsServer` is a real HTTP server on 127.0.0.1 (asyncio and ``h11`` in a
background thread). It answers token-id prompts the way vLLM's OpenAI-compatible server
does (``choices[0].token_ids``, ``prompt_token_ids``, ``logprobs.tokens`` as
``"token_id:N"``, ``token_logprobs``, ``finish_reason``), with scripted token ids instead of
a model; ``max_tokens`` and ``stop_token_ids`` are honoured as vLLM does (the stop token is
kept). ``legacy=True`` imitates a vLLM older than 0.10.2 (no ``return_token_ids``).

:func:`byte_tokenizer` builds a byte-level Hugging Face tokenizer in code (no download)
with ChatML and Hermes special tokens.

:class:`StandInLLM` takes the place of ``vllm.LLM`` where vLLM cannot run (it needs a CUDA
GPU): it has ``LLM.generate``'s documented signature and returns objects shaped like
``vllm.RequestOutput``, with scripted token ids instead of a model.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rolloutgym.install_hints import pip_install

if TYPE_CHECKING:
    from rolloutgym_testing.http_server import LocalHTTPServer

__all__ = ["CompletionsServer", "StandInLLM", "byte_tokenizer"]


def byte_tokenizer() -> Any:
    """A byte-level Hugging Face tokenizer with the ChatML/Qwen special tokens, built in code (no download).

    It is rolloutgym-testing's (the test extra), which needs ``transformers`` and ``tokenizers``.
    """
    try:
        from rolloutgym_testing.tokenizers import byte_tokenizer as build
    except ImportError as error:
        raise ImportError(
            f"byte_tokenizer comes from rolloutgym-testing, which is not importable here ({error}); "
            f"install the test extra: {pip_install('rolloutgym-vllm', 'test')}"
        ) from error
    return build()


def _local_http_server() -> type[LocalHTTPServer]:
    """rolloutgym-testing's HTTP server (the test extra), imported when a server starts."""
    try:
        from rolloutgym_testing.http_server import LocalHTTPServer
    except ImportError as error:
        raise ImportError(
            f"CompletionsServer runs on the HTTP server of rolloutgym-testing, which is not importable here "
            f"({error}); install the test extra: {pip_install('rolloutgym-vllm', 'test')}"
        ) from error
    return LocalHTTPServer


Responder = Callable[[Sequence[int], Mapping[str, Any]], Sequence[int]]


class CompletionsServer:
    """A scripted vLLM-style completions server on 127.0.0.1; use as a context manager.

    Args:
        replies: token-id continuations used in order (cycled), or
            ``responder(prompt_token_ids, request_body) -> token ids``.
        latency: seconds added to every answer.
        legacy: answer like vLLM < 0.10.2 (no ``token_ids``/``prompt_token_ids`` fields).
        decode: token ids -> text for the ``text`` field (default: a placeholder).
        fail_first: answer this many requests with HTTP 503 first (retry tests).

    Attributes:
        requests: the JSON bodies received.
        url: ``http://127.0.0.1:PORT/v1``.
    """

    def __init__(
        self,
        replies: Sequence[Sequence[int]] | Responder,
        *,
        latency: float = 0.0,
        legacy: bool = False,
        decode: Callable[[Sequence[int]], str] | None = None,
        fail_first: int = 0,
    ) -> None:
        self.replies = replies
        self.latency = latency
        self.legacy = legacy
        self.decode = decode or (lambda tokens: f"<{len(tokens)} tokens>")
        self.fail_first = fail_first
        self.requests: list[dict[str, Any]] = []
        self._http: LocalHTTPServer | None = None

    @property
    def url(self) -> str:
        if self._http is None:
            raise RuntimeError("the server is not running; use it as 'with CompletionsServer(...) as server:'")
        return f"{self._http.root}/v1"

    def __enter__(self) -> CompletionsServer:
        self._http = _local_http_server()(self._handle)
        self._http.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._http is not None:
            self._http.stop()
            self._http = None

    def _continuation(self, prompt: Sequence[int], body: Mapping[str, Any], index: int) -> list[int]:
        if callable(self.replies):
            return [int(token) for token in self.replies(prompt, body)]
        return [int(token) for token in self.replies[index % len(self.replies)]]

    async def _handle(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        if method != "POST" or not path.rstrip("/").endswith("/completions"):
            return 404, {}, json.dumps({"error": {"message": f"no route {method} {path}"}}).encode()
        body = json.loads(raw)
        self.requests.append(body)
        index = len(self.requests) - 1
        if self.latency:
            await asyncio.sleep(self.latency)
        if index < self.fail_first:
            return 503, {"retry-after-ms": "1"}, json.dumps({"error": {"message": "scripted overload"}}).encode()
        prompt = body.get("prompt")
        if not isinstance(prompt, list) or not all(isinstance(token, int) for token in prompt):
            error = {"error": {"message": "this test server takes token-id prompts only", "type": "BadRequestError"}}
            return 400, {}, json.dumps(error).encode()
        tokens = self._continuation(prompt, body, index)
        finish, matched = "length", None
        stops = set(body.get("stop_token_ids") or ())
        for position, token in enumerate(tokens):
            if token in stops:
                tokens, finish, matched = tokens[: position + 1], "stop", token
                break
        else:
            finish = "stop"
        if len(tokens) > int(body.get("max_tokens") or 16):
            tokens, finish, matched = tokens[: int(body.get("max_tokens") or 16)], "length", None
        choice: dict[str, Any] = {
            "index": 0,
            "text": self.decode(tokens),
            "finish_reason": finish,
            "stop_reason": matched,
            "logprobs": None,
        }
        if body.get("logprobs") is not None:
            as_ids = bool(body.get("return_tokens_as_token_ids"))
            choice["logprobs"] = {
                "text_offset": list(range(len(tokens))),
                "token_logprobs": [-0.1 * (position + 1) for position in range(len(tokens))],
                "tokens": [f"token_id:{token}" if as_ids else self.decode([token]) for token in tokens],
                "top_logprobs": [None] * len(tokens),
            }
        if body.get("return_token_ids") and not self.legacy:
            choice["token_ids"] = tokens
            choice["prompt_token_ids"] = list(prompt)
        response = {
            "id": f"cmpl-{index}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt),
                "completion_tokens": len(tokens),
                "total_tokens": len(prompt) + len(tokens),
            },
        }
        return 200, {}, json.dumps(response).encode()


@dataclass
class StandInLogprob:
    """Shaped like ``vllm.sequence.Logprob``."""

    logprob: float


@dataclass
class StandInCompletionOutput:
    """Shaped like ``vllm.CompletionOutput``."""

    token_ids: list[int]
    logprobs: list[dict[int, StandInLogprob]] | None
    finish_reason: str
    stop_reason: Any = None


@dataclass
class StandInRequestOutput:
    """Shaped like ``vllm.RequestOutput``."""

    prompt_token_ids: list[int]
    outputs: list[StandInCompletionOutput]


def _option(params: Any, name: str) -> Any:
    return params.get(name) if isinstance(params, Mapping) else getattr(params, name, None)


class StandInLLM:
    """Answers like ``vllm.LLM.generate(prompts, sampling_params, use_tqdm=...)``, from a script.

    Args:
        reply: the token ids of every answer, or ``reply(prompt_token_ids, params) -> ids``.
        fail: raise ``RuntimeError("CUDA out of memory")`` from every ``generate`` call.
        tokenizer: what ``get_tokenizer()`` returns (default: :func:`byte_tokenizer`).

    Each answer is cut after the first of the request's ``stop_token_ids`` (kept, as vLLM
    does) and at ``max_tokens`` (``finish_reason="length"``); each token gets logprob -0.5
    (plus a runner-up entry, as vLLM's logprob dicts may hold). ``calls`` keeps the batch
    size of every call and ``params`` the sampling params of the last one.
    """

    def __init__(
        self,
        reply: Sequence[int] | Callable[[Sequence[int], Any], Sequence[int]],
        *,
        fail: bool = False,
        tokenizer: Any = None,
    ) -> None:
        self.reply = reply
        self.fail = fail
        self.tokenizer = tokenizer
        self.calls: list[int] = []
        self.params: list[Any] = []

    def generate(
        self, prompts: Sequence[Mapping[str, Any]], sampling_params: Sequence[Any], use_tqdm: bool = True
    ) -> list[StandInRequestOutput]:
        if self.fail:
            raise RuntimeError("CUDA out of memory")
        self.calls.append(len(prompts))
        self.params = list(sampling_params)
        outputs = []
        for prompt, params in zip(prompts, sampling_params, strict=True):
            prompt_ids = list(prompt["prompt_token_ids"])
            answer = list(self.reply(prompt_ids, params) if callable(self.reply) else self.reply)
            finish = "stop"
            stops = set(_option(params, "stop_token_ids") or ())
            for index, token in enumerate(answer):
                if token in stops:
                    answer = answer[: index + 1]
                    break
            limit = _option(params, "max_tokens")
            if limit is not None and len(answer) > limit:
                answer, finish = answer[:limit], "length"
            logprobs = [{token: StandInLogprob(-0.5), token + 1: StandInLogprob(-3.0)} for token in answer]
            outputs.append(StandInRequestOutput(prompt_ids, [StandInCompletionOutput(answer, logprobs, finish)]))
        return outputs

    def get_tokenizer(self) -> Any:
        if self.tokenizer is None:
            self.tokenizer = byte_tokenizer()
        return self.tokenizer
