"""The endpoint's Starlette application (routes for the three wire formats)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from rolloutgym_protocol.errors import ConfigError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from . import wire


def _error(status: int, message: str, anthropic: bool) -> JSONResponse:
    if anthropic:
        kind = "invalid_request_error" if status < 500 else "api_error"
        return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status)
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "code": status}}, status_code=status
    )


def _sse(events: Iterator[str]) -> StreamingResponse:
    return StreamingResponse(events, media_type="text/event-stream", headers={"cache-control": "no-cache"})


def _chat_response(reply: wire.Reply, request: wire.Request) -> Response:
    if not request.stream:
        return JSONResponse(wire.chat_body(reply, request.model))

    def events() -> Iterator[str]:
        for chunk in wire.chat_chunks(reply, request.model):
            yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
        yield "data: [DONE]\n\n"

    return _sse(events())


def _responses_response(reply: wire.Reply, request: wire.Request) -> Response:
    body = wire.responses_body(reply, request.model)
    if not request.stream:
        return JSONResponse(body)

    def events() -> Iterator[str]:
        start = {**body, "status": "in_progress", "output": []}
        created = {"type": "response.created", "response": start, "sequence_number": 0}
        yield f"event: response.created\ndata: {json.dumps(created, ensure_ascii=False)}\n\n"
        for index, item in enumerate(body["output"]):
            done = {
                "type": "response.output_item.done",
                "output_index": index,
                "item": item,
                "sequence_number": index + 1,
            }
            yield f"event: response.output_item.done\ndata: {json.dumps(done, ensure_ascii=False)}\n\n"
        final = {"type": "response.completed", "response": body, "sequence_number": len(body["output"]) + 1}
        yield f"event: response.completed\ndata: {json.dumps(final, ensure_ascii=False)}\n\n"

    return _sse(events())


def _anthropic_response(reply: wire.Reply, request: wire.Request) -> Response:
    if not request.stream:
        return JSONResponse(wire.anthropic_body(reply, request.model))

    def events() -> Iterator[str]:
        for name, data in wire.anthropic_events(reply, request.model):
            yield f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"

    return _sse(events())


def _route(
    endpoint: Any, parse: Callable[[Any], wire.Request], answer: Callable[..., Response], anthropic: bool
) -> Any:

    async def handle(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the request body is not JSON", anthropic)
        if not isinstance(body, dict):
            return _error(400, "the request body must be a JSON object", anthropic)
        try:
            parsed = parse(body)
            reply = await endpoint.call(parsed, request.path_params.get("session", "default"))
        except ConfigError as exc:
            return _error(400, str(exc), anthropic)
        except wire.Refused as exc:
            return _error(exc.status, str(exc), anthropic)
        except Exception as exc:  # the model failed: tell the harness, keep serving
            return _error(500, f"the policy failed: {type(exc).__name__}: {exc}", anthropic)
        return answer(reply, parsed)

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


def build_app(endpoint: Any) -> Starlette:
    chat = _route(endpoint, wire.parse_chat, _chat_response, False)
    responses = _route(endpoint, wire.parse_responses, _responses_response, False)
    messages = _route(endpoint, wire.parse_anthropic, _anthropic_response, True)

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
            Route(f"{prefix}/v1/models", models, methods=["GET"]),
        ]
    mcp_route = _McpRoute(endpoint)
    routes += [Route("/mcp/{name}/", mcp_route), Route("/mcp/{name}", mcp_route)]
    return Starlette(routes=routes)
