"""A real, local OpenAI-compatible chat-completions server for tests and benchmarks.

:class:`ChatCompletionsServer` listens on ``127.0.0.1`` (an ephemeral port), speaks the
``POST /v1/chat/completions`` wire format, and answers from a script of :class:`Reply`
objects, then from a default responder. It is a real HTTP server (asyncio
and ``h11`` in a background thread), so the adapter's retries, timeouts and
concurrency are exercised over real sockets::

    with ChatCompletionsServer([Reply(status=429), Reply(content="42")]) as server:
        policy = make_policy("test-model", base_url=server.url)

The default responder calls the first tool the request offers (arguments filled from the
tool's JSON schema) or answers ``"42"``; it reports usage and, when asked for, one logprob
per whitespace-separated piece. One asyncio loop (with ``h11`` for HTTP) serves every
connection, so hundreds of concurrent requests waiting on scripted latency cost little.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rolloutgym.install_hints import pip_install

if TYPE_CHECKING:
    from rolloutgym_testing.http_server import LocalHTTPServer

__all__ = ["ChatCompletionsServer", "Reply", "default_reply"]


def _local_http_server() -> type[LocalHTTPServer]:
    """rolloutgym-testing's HTTP server (the test extra), imported when a server starts."""
    try:
        from rolloutgym_testing.http_server import LocalHTTPServer
    except ImportError as error:
        raise ImportError(
            f"ChatCompletionsServer runs on the HTTP server of rolloutgym-testing, which is not importable here "
            f"({error}); install the test extra: {pip_install('rolloutgym-openai', 'test')}"
        ) from error
    return LocalHTTPServer


@dataclass(frozen=True)
class Reply:
    """One scripted answer of :class:`ChatCompletionsServer`.

    Attributes:
        content: the assistant text.
        tool_calls: rolloutgym-shaped calls ``{"id"?, "name", "arguments": {...} | str}``
            (a string is sent as is, so malformed JSON can be scripted).
        status: an HTTP status other than 200 answers with an OpenAI-style error body.
        headers: extra response headers (``Retry-After``, ``retry-after-ms``).
        delay: seconds to wait before answering (latency, or a hang for timeout tests).
        finish_reason: defaults to ``"tool_calls"`` with calls, else ``"stop"``.
        raw_body: send these bytes instead of a JSON body (a broken server).
        token_ids: add vLLM-style ``token_ids`` to the choice and ``prompt_token_ids``.
    """

    content: str | None = ""
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    finish_reason: str | None = None
    raw_body: bytes | None = None
    token_ids: tuple[int, ...] | None = None


def _placeholder(schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {name: _placeholder(sub) for name, sub in (schema.get("properties") or {}).items()}
    return "x"


def default_reply(request: Mapping[str, Any]) -> Reply:
    """Call the first offered tool with schema-filled arguments, else answer ``"42"``."""
    tools = request.get("tools") or []
    if tools:
        function = tools[0].get("function", {})
        arguments = _placeholder(function.get("parameters") or {"type": "object"})
        return Reply(content="", tool_calls=({"name": function.get("name", "tool"), "arguments": arguments},))
    return Reply(content="42")


def _wire_calls(calls: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    wire = []
    for index, call in enumerate(calls):
        arguments = call.get("arguments", {})
        wire.append(
            {
                "id": call.get("id", f"call_{index}"),
                "type": "function",
                "function": {
                    "name": call.get("name", ""),
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return wire


class ChatCompletionsServer:
    """A scripted OpenAI-compatible server on ``127.0.0.1``; use as a context manager.

    Args:
        script: replies used in order, one per request; afterwards ``responder`` answers.
        responder: ``responder(request_body) -> Reply`` (default :func:`default_reply`).
        latency: seconds added to every reply (the fixed model latency of benchmarks).
        model: the model name reported in responses.

    Attributes:
        requests: the JSON bodies received, in arrival order.
        url: ``http://127.0.0.1:PORT/v1`` (set once started).
    """

    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        responder: Callable[[Mapping[str, Any]], Reply] = default_reply,
        latency: float = 0.0,
        model: str = "test-model",
    ) -> None:
        self._script: deque[Reply] = deque(script)
        self._responder = responder
        self.latency = latency
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._http: LocalHTTPServer | None = None
        self._counter = 0

    @property
    def url(self) -> str:
        if self._http is None:
            raise RuntimeError("the server is not running; use it as 'with ChatCompletionsServer() as server:'")
        return f"{self._http.root}/v1"

    def __enter__(self) -> ChatCompletionsServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start listening on an ephemeral port of 127.0.0.1."""
        self._http = _local_http_server()(self._handle)
        self._http.start()

    def stop(self) -> None:
        """Stop the server and close its connections."""
        if self._http is not None:
            self._http.stop()
            self._http = None

    async def _handle(self, method: str, path: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        route = path.split("?")[0].rstrip("/")
        if method == "GET" and route.endswith("/models"):
            return 200, {}, json.dumps({"object": "list", "data": [{"id": self.model, "object": "model"}]}).encode()
        if method != "POST" or not route.endswith("/chat/completions"):
            return 404, {}, _error(f"no route {method} {path}", "not_found")
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            return 400, {}, _error("request body is not JSON", "invalid_request_error")
        reply, number = self._next_reply(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            delay = self.latency + reply.delay
            if delay > 0:
                await asyncio.sleep(delay)
        finally:
            self.in_flight -= 1
        if reply.raw_body is not None:
            return reply.status, dict(reply.headers), reply.raw_body
        if reply.status != 200:
            return reply.status, dict(reply.headers), _error(f"scripted error {reply.status}", "server_error")
        return 200, dict(reply.headers), json.dumps(self._response_body(body, reply, number)).encode()

    def _next_reply(self, body: Mapping[str, Any]) -> tuple[Reply, int]:
        self.requests.append(dict(body))
        self._counter += 1
        number = self._counter
        reply = self._script.popleft() if self._script else None
        return (reply if reply is not None else self._responder(body)), number

    def _response_body(self, body: Mapping[str, Any], reply: Reply, number: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = _wire_calls(reply.tool_calls)
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        pieces = (reply.content or "").split() or [reply.content or ""]
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        if body.get("logprobs"):
            # One entry per sampled token, as a real server sends; token ids when scripted.
            if reply.token_ids is None:
                tokens = pieces
            elif body.get("return_tokens_as_token_ids"):
                tokens = [f"token_id:{token}" for token in reply.token_ids]
            else:
                tokens = [f"<{token}>" for token in reply.token_ids]
            choice["logprobs"] = {
                "content": [
                    {"token": token, "logprob": -0.25 * (index + 1), "bytes": None, "top_logprobs": []}
                    for index, token in enumerate(tokens)
                ]
            }
        prompt_tokens = sum(len(str(item.get("content") or "").split()) + 4 for item in body.get("messages") or [])
        completion_tokens = len(reply.token_ids) if reply.token_ids is not None else len(pieces)
        response: dict[str, Any] = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        if reply.token_ids is not None and body.get("return_token_ids"):
            choice["token_ids"] = list(reply.token_ids)
            response["prompt_token_ids"] = list(range(1, prompt_tokens + 1))
        return response


def _error(message: str, kind: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind}}).encode()
