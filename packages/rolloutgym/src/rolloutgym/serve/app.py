"""The ASGI app of ``rolloutgym serve``: JSON over HTTP, a WebSocket session, OpenEnv routes.

HTTP (every body and answer is a JSON object; errors are ``{"error": {"type", "message"}}``
with a 4xx status, or 500 for an env that crashed, never a traceback)::

    GET    /health                      {"status": "ok", "sessions": n}
    GET    /metrics                     Prometheus text (``?format=json`` for JSON)
    GET    /envs                        {"envs": [{id, version, description, tasks, ...}]}
    GET    /envs/{env_id}               one env's description
    GET    /envs/{env_id}/tasks         {"tasks": [{index, id, split, item}]}
    POST   /sessions                    {env, task?, kwargs?, reset?: {seed?, options?}}
                                        -> the session's description (+ "reset" result)
    GET    /sessions                    open sessions
    POST   /sessions/{id}/reset         {seed?, options?} -> {observation, info}
    POST   /sessions/{id}/step          {action} -> {observation, reward, terminated, truncated, info}
    POST   /sessions/{id}/call          {method: "oracle_action" | "null_action"} -> {result}
    DELETE /sessions/{id}               {"closed": true | false}

WebSocket ``/ws``: messages ``{"op": "open" | "attach" (a session opened over HTTP) |
"reset" | "step" | "call" | "close", ...}`` with the fields above, answered with
``{"ok": true, "result": ...}`` or ``{"ok": false, "status": 4xx, "error": {...}}``: one
session per connection, or many when every message carries an ``"id"`` (and a
``"session"``), see ``_websocket.py``. Sessions close when their connection does.

OpenEnv (``openenv-core``'s ``EnvClient``): ``{env_id}/ws``, ``{env_id}/health``,
``{env_id}/schema``, ``{env_id}/metadata``; see ``docs/how-to/serve-envs.md``.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from ._codec import dumps_text
from ._errors import RequestTooLarge, error_body, status_for
from ._openenv import openenv_routes
from ._websocket import WebSocketConnection, parse_json
from .catalog import Catalog
from .sessions import SessionManager

__all__ = ["ServeConfig", "create_app"]

logger = logging.getLogger("rolloutgym.serve")

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024


def dumps(value: Any) -> bytes:
    """:func:`dumps_text` as UTF-8 bytes (an HTTP body)."""
    return dumps_text(value).encode()


def json_response(value: Any, status: int = 200) -> Response:
    return Response(dumps(value), status_code=status, media_type="application/json")


def error_response(exc: BaseException) -> Response:
    status = status_for(exc)
    if status >= 500:
        logger.warning("env error", extra={"event": "error", "error": f"{type(exc).__name__}: {exc}"}, exc_info=exc)
    return json_response(error_body(exc), status)


class ServeConfig:
    """Options of a server (the ``rolloutgym serve`` flags).

    Args:
        envs: env ids and env files to serve (empty: every registered env).
        token: bearer token clients must send (``Authorization: Bearer TOKEN``).
        max_sessions: open sessions at most (one more gets HTTP 429).
        idle_timeout: seconds without a call before a session is closed.
        max_body_bytes: largest request body / WebSocket message accepted (413 beyond).
        allow_env_kwargs: accept env factory keyword arguments from clients.
        expose_task_items: list task items (with their ground truth, as a local run
            file records them) to clients; off: only index, id and split.
        env_kwargs: keyword arguments for every served env's factory.
    """

    def __init__(
        self,
        envs: list[str] | None = None,
        *,
        token: str | None = None,
        max_sessions: int = 1024,
        idle_timeout: float | None = 300.0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        allow_env_kwargs: bool = False,
        expose_task_items: bool = True,
        env_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.env_kwargs = dict(env_kwargs or {})
        self.envs = list(envs or [])
        self.token = token or None
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.max_body_bytes = max_body_bytes
        self.allow_env_kwargs = allow_env_kwargs
        self.expose_task_items = expose_task_items


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object body (``{}`` when empty); 400/413 on bad or big bodies."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestTooLarge(
            f"request body of {declared} bytes is over this server's limit of {limit} bytes (--max-body-bytes)"
        )
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestTooLarge(f"request body is over this server's limit of {limit} bytes (--max-body-bytes)")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    value = parse_json(raw, "request body")
    if not isinstance(value, dict):
        raise ValueError(f"request body must be a JSON object, got {type(value).__name__}")
    return value


class _Server:
    """The handlers, bound to one catalog and session manager."""

    def __init__(self, config: ServeConfig, manager: SessionManager) -> None:
        self.config = config
        self.manager = manager

    def authorized(self, headers: Any, query: Any = None) -> bool:
        token = self.config.token
        if token is None:
            return True
        given = headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer":
            value = ""
        return hmac.compare_digest(value.strip().encode(), token.encode())

    # -- HTTP -------------------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        return json_response(
            {"status": "ok", "sessions": len(self.manager.sessions), "max_sessions": self.manager.max_sessions}
        )

    async def metrics(self, request: Request) -> Response:
        snapshot = self.manager.snapshot()
        if request.query_params.get("format") == "json":
            return json_response(snapshot)
        return Response(prometheus_text(snapshot), media_type="text/plain; version=0.0.4")

    async def envs(self, request: Request) -> Response:
        return json_response({"envs": self.manager.catalog.describe()})

    async def env(self, request: Request) -> Response:
        path = request.path_params["env_path"]
        if path.endswith("/tasks"):
            served = self.manager.catalog.get(path[: -len("/tasks")])
            return json_response({"env": served.env_id, "tasks": served.tasks(items=self.config.expose_task_items)})
        return json_response(self.manager.catalog.get(path).info())

    async def sessions(self, request: Request) -> Response:
        if request.method == "GET":
            now = time.monotonic()
            listing = [
                {
                    "session": s.id,
                    "env": s.served.env_id,
                    "task_id": s.task_id,
                    "steps": s.steps,
                    "transport": s.transport,
                    "idle_seconds": now - s.last_used,
                }
                for s in self.manager.sessions.values()
            ]
            return json_response({"sessions": listing})
        body = await read_json(request, self.config.max_body_bytes)
        return json_response(await self.open(body, "http"))

    async def open(self, body: dict[str, Any], transport: str) -> dict[str, Any]:
        kwargs = body.get("kwargs")
        if kwargs is not None and not isinstance(kwargs, dict):
            raise TypeError("kwargs must be a JSON object")
        reset = body.get("reset")
        if reset is not None and reset is not False and not isinstance(reset, dict):
            raise TypeError("reset must be a JSON object ({seed?, options?}) or omitted")
        session = await self.manager.open(body.get("env"), task=body.get("task"), kwargs=kwargs, transport=transport)
        description = session.description()
        if isinstance(reset, dict):
            try:
                description["reset"] = await self.manager.reset(
                    session.id, seed=reset.get("seed"), options=reset.get("options")
                )
            except Exception as exc:  # reported like a reset() call's error; the session stays open
                description["reset_error"] = {**error_body(exc)["error"], "status": status_for(exc)}
        return description

    async def session_call(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        operation = request.path_params.get("operation")
        if request.method == "DELETE":
            return json_response({"closed": await self.manager.close(session_id)})
        if request.method == "GET":
            return json_response(self.manager.get(session_id).description())
        body = await read_json(request, self.config.max_body_bytes)
        return json_response(await self.dispatch(session_id, operation, body))

    async def dispatch(self, session_id: str, operation: Any, body: dict[str, Any]) -> Any:
        if operation == "step":
            if "action" not in body:
                raise ValueError('step needs {"action": ...}')
            return await self.manager.step(session_id, body["action"], prefetch=body.get("prefetch"))
        if operation == "reset":
            return await self.manager.reset(
                session_id, seed=body.get("seed"), options=body.get("options"), prefetch=body.get("prefetch")
            )
        if operation == "call":
            return {"result": await self.manager.call(session_id, body.get("method"))}
        raise LookupError(f"unknown operation {operation!r}; use reset, step, call or close")

    # -- WebSocket --------------------------------------------------------------------

    async def websocket(self, websocket: WebSocket) -> None:
        if not self.authorized(websocket.headers):
            await websocket.close(code=1008, reason="missing or wrong bearer token")
            return
        await websocket.accept()
        await WebSocketConnection(self, websocket).run()


def prometheus_text(snapshot: dict[str, Any]) -> str:
    """``/metrics`` in the Prometheus text format."""
    lines = []
    for name in (
        "sessions_open",
        "sessions_max",
        "steps_per_second",
        "uptime_seconds",
        "python_allocated_blocks",
        "process_resident_bytes",
    ):
        if snapshot[name] is not None:
            lines += [f"# TYPE rolloutgym_{name} gauge", f"rolloutgym_{name} {snapshot[name]}"]
    for name in (
        "sessions_created_total",
        "sessions_closed_total",
        "sessions_reaped_total",
        "sessions_rejected_total",
        "steps_total",
        "errors_total",
    ):
        lines += [f"# TYPE rolloutgym_{name} counter", f"rolloutgym_{name} {snapshot[name]}"]
    latency = snapshot["step_latency_seconds"]
    lines.append("# TYPE rolloutgym_step_latency_seconds summary")
    for key, quantile in (("p50", "0.5"), ("p90", "0.9"), ("p99", "0.99")):
        if latency[key] is not None:
            lines.append(f'rolloutgym_step_latency_seconds{{quantile="{quantile}"}} {latency[key]}')
    lines.append(f"rolloutgym_step_latency_seconds_count {latency['count']}")
    return "\n".join(lines) + "\n"


class _Guard:
    """ASGI middleware: bearer token on every route but ``/health``, and JSON errors for anything unhandled."""

    def __init__(self, app: Any, server: _Server) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope.get("path", "")
            if path not in ("/health",) and not path.endswith("/health"):
                headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope.get("headers", ())}
                if not self.server.authorized(headers):
                    from ._errors import Unauthorized

                    response = json_response(
                        error_body(
                            Unauthorized(
                                "this server needs a bearer token: send 'Authorization: Bearer TOKEN' "
                                "(RemoteEnv(..., token=...) or ROLLOUTGYM_SERVE_TOKEN)"
                            )
                        ),
                        401,
                    )
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def _handled(handler: Any, manager: SessionManager) -> Any:
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)  # type: ignore[no-any-return]
        except Exception as exc:  # noqa: BLE001 - every error is a JSON answer
            manager.metrics.errors += 1
            return error_response(exc)

    return endpoint


def create_app(config: ServeConfig | None = None, *, catalog: Catalog | None = None, registry: Any = None) -> Any:
    """The ASGI app serving ``config.envs`` (run it with uvicorn, or ``rolloutgym serve``)."""
    config = config or ServeConfig()
    catalog = catalog or Catalog(config.envs, registry=registry, env_kwargs=config.env_kwargs)
    manager = SessionManager(
        catalog,
        max_sessions=config.max_sessions,
        idle_timeout=config.idle_timeout,
        allow_env_kwargs=config.allow_env_kwargs,
    )
    server = _Server(config, manager)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        manager.start()
        logger.info(
            "serving", extra={"event": "start", "envs": catalog.ids() if not catalog.serve_all else "all registered"}
        )
        try:
            yield
        finally:
            await manager.close_all()
            logger.info("stopped", extra={"event": "stop"})

    routes = [
        Route("/health", _handled(server.health, manager)),
        Route("/metrics", _handled(server.metrics, manager)),
        Route("/envs", _handled(server.envs, manager)),
        Route("/envs/{env_path:path}", _handled(server.env, manager)),
        Route("/sessions", _handled(server.sessions, manager), methods=["GET", "POST"]),
        Route("/sessions/{session_id}", _handled(server.session_call, manager), methods=["GET", "DELETE"]),
        Route("/sessions/{session_id}/{operation}", _handled(server.session_call, manager), methods=["POST"]),
        WebSocketRoute("/ws", server.websocket),
        *openenv_routes(server),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.manager = manager
    app.state.catalog = catalog
    app.state.config = config

    async def not_found(request: Request, exc: Exception) -> Response:
        return json_response(
            {
                "error": {
                    "type": "NotFound",
                    "message": f"no route {request.method} {request.url.path}; "
                    "see GET /envs and docs/how-to/serve-envs.md",
                }
            },
            404,
        )

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return json_response(
            {
                "error": {
                    "type": "MethodNotAllowed",
                    "message": f"{request.method} is not allowed on {request.url.path}",
                }
            },
            405,
        )

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_allowed)
    guarded = _Guard(app, server)
    guarded.state = app.state  # type: ignore[attr-defined]
    return guarded
