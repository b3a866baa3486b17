"""The endpoint's Starlette application (routes for the three wire formats)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from rolloutgym_protocol.errors import ConfigError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from . import _replies, wire

SESSION_NAME = re.compile(r"(?!\.+$)[A-Za-z0-9._-]{1,64}")


def _error(status: int, message: str, anthropic: bool) -> JSONResponse:
    if anthropic:
        kind = "invalid_request_error" if status < 500 else "api_error"
        return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status)
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "code": status}}, status_code=status
    )


def _sse(events: Iterator[str]) -> StreamingResponse:
    return StreamingResponse(events, media_type="text/event-stream", headers={"cache-control": "no-cache"})


def _chat_response(replies: list[wire.Reply], request: wire.Request) -> Response:
    if not request.stream:
        return JSONResponse(_replies.chat_body(replies, request.model))

    def events() -> Iterator[str]:
        for chunk in _replies.chat_chunks(replies, request.model):
            yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
        yield "data: [DONE]\n\n"

    return _sse(events())


def _responses_response(replies: list[wire.Reply], request: wire.Request) -> Response:
    options = request.options
    body = _replies.responses_body(
        replies[0],
        request.model,
        store=options.store,
        previous=options.previous_response_id,
        namespaced=request.namespaced,
    )
    if not request.stream:
        return JSONResponse(body)

    def events() -> Iterator[str]:
        for event in _replies.responses_events(body):
            yield f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"

    return _sse(events())


def _anthropic_response(replies: list[wire.Reply], request: wire.Request) -> Response:
    if not request.stream:
        return JSONResponse(_replies.anthropic_body(replies[0], request.model))

    def events() -> Iterator[str]:
        for name, data in _replies.anthropic_events(replies[0], request.model):
            yield f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"

    return _sse(events())


class _TooLarge(Exception):
    pass


async def _read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (``_TooLarge``) as soon as it passes ``limit`` bytes: a declared
    length over the limit is refused before any of it is read, a streamed one while it arrives."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_body(request: Request, endpoint: Any, anthropic: bool) -> Any:
    """The request's JSON object, or the error response that refuses it."""
    name = request.path_params.get("session", "default")
    if not SESSION_NAME.fullmatch(name):
        return _error(400, "a session name is 1 to 64 letters, digits, '.', '_' or '-' (/s/NAME/v1/...)", anthropic)
    try:
        raw = await _read_body(request, endpoint.max_body_bytes)
    except _TooLarge:
        return _error(
            413, f"the request body is larger than {endpoint.max_body_bytes} bytes (max_body_bytes)", anthropic
        )
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return _error(400, "the request body is not JSON", anthropic)
    if not isinstance(body, dict):
        return _error(400, "the request body must be a JSON object", anthropic)
    return body


def _route(
    endpoint: Any, parse: Callable[[Any], wire.Request], answer: Callable[..., Response], anthropic: bool
) -> Any:

    async def handle(request: Request) -> Response:
        body = await _json_body(request, endpoint, anthropic)
        if isinstance(body, Response):
            return body
        try:
            parsed = parse(body)
        except ConfigError as exc:
            return _error(400, str(exc), anthropic)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            return _error(400, f"malformed request ({type(exc).__name__}: {exc})", anthropic)
        try:
            replies = await endpoint.call(parsed, request.path_params.get("session", "default"))
        except ConfigError as exc:
            return _error(400, str(exc), anthropic)
        except wire.Refused as exc:
            return _error(exc.status, str(exc), anthropic)
        except Exception as exc:  # the model failed: tell the harness, keep serving
            return _error(500, f"the policy failed: {type(exc).__name__}: {exc}", anthropic)
        return answer(replies, parsed)

    return handle


def _count_tokens(endpoint: Any) -> Any:
    """Anthropic's ``POST /v1/messages/count_tokens``: the rendered prompt's length (nothing sampled or recorded)."""

    async def handle(request: Request) -> Response:
        body = await _json_body(request, endpoint, True)
        if isinstance(body, Response):
            return body
        try:
            parsed = wire.parse_anthropic({"max_tokens": 1, **body})
            count = endpoint.count_tokens(parsed)
        except ConfigError as exc:
            return _error(400, str(exc), True)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            return _error(400, f"malformed request ({type(exc).__name__}: {exc})", True)
        return JSONResponse({"input_tokens": count})

    return handle


class _McpRoute:
    """``/mcp/NAME/``: the MCP server the endpoint serves under that name (streamable HTTP)."""

    def __init__(self, endpoint: Any) -> None:
        self.endpoint = endpoint

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        manager = self.endpoint.mcp_apps.get(scope.get("path_params", {}).get("name"))
        if manager is None:
            await JSONResponse({"error": "no MCP server at this path (the episode is over?)"}, status_code=404)(
                scope, receive, send
            )
            return
        await manager.handle_request(scope, receive, send)


class QuietOnCancel:
    """The endpoint's app as uvicorn serves it: a request still in flight when the endpoint stops
    (the episode ended, its loop is closing, its MCP server was removed under an open stream, a
    harness killed mid-call) is cancelled; it then ends with a 503 (or the end of the response it
    started) instead of uvicorn's ``Exception in ASGI application`` traceback on the log."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception, asyncio.CancelledError):  # the client may be gone already
                if not started:
                    headers = [(b"content-type", b"text/plain")]
                    await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": b"", "more_body": False})


class FastPaths:
    """The model-call routes (``POST .../chat/completions``, ``/responses``, ``/messages``, with or
    without ``/s/NAME``) found by one dict lookup and answered without Starlette's middleware and
    regex routing (a third of the endpoint's CPU per call); everything else goes to ``app``."""

    def __init__(self, app: Starlette, table: dict[str, Callable[[Request], Any]]) -> None:
        self.app = app
        self.table = table

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        params: dict[str, str] = {}
        if path.startswith("/s/"):
            name, _, rest = path[3:].partition("/")
            path, params = "/" + rest, {"session": name}
        handler = self.table.get(path) if scope["type"] == "http" and scope.get("method") == "POST" else None
        if handler is None or ("session" in params and not params["session"]):
            await self.app(scope, receive, send)
            return
        scope["path_params"] = params
        response = await handler(Request(scope, receive))
        await response(scope, receive, send)


def build_app(endpoint: Any) -> FastPaths:
    chat = _route(endpoint, wire.parse_chat, _chat_response, False)
    responses = _route(endpoint, wire.parse_responses, _responses_response, False)
    messages = _route(endpoint, wire.parse_anthropic, _anthropic_response, True)
    count_tokens = _count_tokens(endpoint)

    async def models(request: Request) -> JSONResponse:
        name = getattr(endpoint.policy, "name", None) or "rolloutgym"
        return JSONResponse(
            {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "rolloutgym"}]}
        )

    routes = []
    for prefix in ("", "/s/{session}"):
        routes += [
            Route(f"{prefix}/v1/chat/completions", chat, methods=["POST"]),
            Route(f"{prefix}/chat/completions", chat, methods=["POST"]),
            Route(f"{prefix}/v1/responses", responses, methods=["POST"]),
            Route(f"{prefix}/v1/messages", messages, methods=["POST"]),
            Route(f"{prefix}/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route(f"{prefix}/v1/models", models, methods=["GET"]),
        ]
    mcp_route = _McpRoute(endpoint)
    routes += [Route("/mcp/{name}/", mcp_route), Route("/mcp/{name}", mcp_route)]
    table = {"/v1/chat/completions": chat, "/chat/completions": chat, "/v1/responses": responses}
    table.update({"/v1/messages": messages, "/v1/messages/count_tokens": count_tokens})
    return FastPaths(Starlette(routes=routes), table)
