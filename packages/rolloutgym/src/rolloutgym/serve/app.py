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
``{env_id}/schema``, ``{env_id}/metadata``; the Open Reward Standard (the ``openreward``
SDK): ``/create_session``, ``/create``, ``{env_id}/tools``, ``{env_id}/call`` and the rest
of ``_ors.py``; see ``docs/how-to/serve-envs.md``.

Every route but ``GET /health`` needs the bearer token when the server has one, and every
session belongs to the credentials that opened it (see ``_access.py``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute

from ._access import (
    OWNER_SCOPE_KEY,
    UNAUTHORIZED,
    AccessGuard,
    Credentials,
    guard_routes,
    is_anonymous,
    owner_of,
    public_route,
)
from ._errors import SessionNotFound, Unauthorized, error_body, status_for
from ._http import DEFAULT_MAX_BODY_BYTES, error_response, json_response, read_json
from ._openenv import openenv_routes
from ._ors import ors_routes
from ._websocket import WebSocketConnection
from .catalog import Catalog
from .sessions import SessionManager

__all__ = ["ServeConfig", "create_app"]

logger = logging.getLogger("rolloutgym.serve")


class ServeConfig:
    """Options of a server (the ``rolloutgym serve`` flags).

    Args:
        envs: env ids and env files to serve (empty: every registered env).
        token: bearer token clients must send (``Authorization: Bearer TOKEN``), or a
            list of tokens (one per team: sessions belong to the token that opened them).
        max_sessions: open sessions at most (one more gets HTTP 429).
        max_sessions_per_owner: open sessions one owner (credentials, see ``_access.py``) may
            hold at most (one more gets HTTP 429); ``None``: half of ``max_sessions``, so
            one client cannot lock the others out.
        idle_timeout: seconds without a call before a session is closed.
        max_body_bytes: largest request body / WebSocket message accepted (413 beyond).
        allow_env_kwargs: accept env factory keyword arguments from clients.
        expose_task_items: send task data (task items with their ground truth, the
            oracle, grading feedback in ``info``, env error messages), as a local run file
            records them; off: none of it leaves the server (see ``_disclosure.py``).
        env_kwargs: keyword arguments for every served env's factory.
    """

    def __init__(
        self,
        envs: list[str] | None = None,
        *,
        token: str | Sequence[str] | None = None,
        max_sessions: int = 1024,
        max_sessions_per_owner: int | None = None,
        idle_timeout: float | None = 300.0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        allow_env_kwargs: bool = False,
        expose_task_items: bool = True,
        env_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.env_kwargs = dict(env_kwargs or {})
        self.envs = list(envs or [])
        tokens = [token] if isinstance(token, str) else list(token or ())
        self.tokens = [value for value in tokens if value]
        self.token = self.tokens[0] if self.tokens else None
        self.max_sessions = max_sessions
        self.max_sessions_per_owner = (
            max(1, (max_sessions + 1) // 2) if max_sessions_per_owner is None else max_sessions_per_owner
        )
        self.idle_timeout = idle_timeout
        self.max_body_bytes = max_body_bytes
        self.allow_env_kwargs = allow_env_kwargs
        self.expose_task_items = expose_task_items


class _Server:
    """The handlers, bound to one catalog and session manager."""

    def __init__(self, config: ServeConfig, manager: SessionManager) -> None:
        self.config = config
        self.manager = manager

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
        return json_response(self.manager.catalog.get(request.path_params["env_path"]).info())

    async def tasks(self, request: Request) -> Response:
        served = self.manager.catalog.get(request.path_params["env_path"])
        return json_response({"env": served.env_id, "tasks": served.tasks(items=self.config.expose_task_items)})

    async def sessions(self, request: Request) -> Response:
        owner = owner_of(request.scope)
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
                for s in self.manager.owned_by(owner)
            ]
            if is_anonymous(owner):  # a keyless client's sessions are reached by their ids only
                listing = []
            return json_response({"sessions": listing})
        body = await read_json(request, self.config.max_body_bytes)
        return json_response(await self.open(body, "http", owner))

    async def open(self, body: dict[str, Any], transport: str, owner: str) -> dict[str, Any]:
        kwargs = body.get("kwargs")
        if kwargs is not None and not isinstance(kwargs, dict):
            raise TypeError("kwargs must be a JSON object")
        reset = body.get("reset")
        if reset is not None and reset is not False and not isinstance(reset, dict):
            raise TypeError("reset must be a JSON object ({seed?, options?}) or omitted")
        session = await self.manager.open(
            body.get("env"), task=body.get("task"), kwargs=kwargs, transport=transport, owner=owner
        )
        description = session.description()
        if isinstance(reset, dict):
            try:
                description["reset"] = await self.manager.reset(
                    session.id, seed=reset.get("seed"), options=reset.get("options"), owner=owner
                )
            except Exception as exc:  # reported like a reset() call's error; the session stays open
                description["reset_error"] = {**error_body(exc)["error"], "status": status_for(exc)}
        return description

    async def session_call(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        operation = request.path_params.get("operation")
        owner = owner_of(request.scope)
        if request.method == "DELETE":
            if not await self.manager.close(session_id, owner):
                self.manager.get(session_id, owner)  # raises SessionNotFound, with its message
                raise SessionNotFound(f"no open session '{session_id}' on this server")
            return json_response({"closed": True})
        if request.method == "GET":
            return json_response(self.manager.get(session_id, owner).description())
        body = await read_json(request, self.config.max_body_bytes)
        return json_response(await self.dispatch(session_id, operation, body, owner))

    async def dispatch(self, session_id: str, operation: Any, body: dict[str, Any], owner: str) -> Any:
        manager = self.manager
        if operation == "step":
            if "action" not in body:
                raise ValueError('step needs {"action": ...}')
            return await manager.step(session_id, body["action"], prefetch=body.get("prefetch"), owner=owner)
        if operation == "reset":
            return await manager.reset(
                session_id,
                seed=body.get("seed"),
                options=body.get("options"),
                prefetch=body.get("prefetch"),
                owner=owner,
            )
        if operation == "call":
            manager.get(session_id, owner)  # someone else's session is not found before anything else
            return {"result": await manager.call(session_id, body.get("method"), owner=owner)}
        manager.get(session_id, owner)
        raise LookupError("unknown operation; use reset, step, call or close")

    # -- WebSocket --------------------------------------------------------------------

    async def websocket(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """``/ws`` as a plain ASGI app (see ``_websocket.py``)."""
        await WebSocketConnection(self, scope, receive, send).run()


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


class _AsgiEndpoint:
    """A route's endpoint that Starlette calls as an ASGI app (it wraps a plain function in a ``WebSocket``)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def _handled(handler: Any, manager: SessionManager) -> Any:
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)  # type: ignore[no-any-return]
        except Exception as exc:  # noqa: BLE001 - every error is a JSON answer
            manager.metrics.errors += 1
            return error_response(exc)

    return endpoint


def _unauthorized() -> Response:
    return json_response(error_body(Unauthorized(UNAUTHORIZED)), 401)


def create_app(config: ServeConfig | None = None, *, catalog: Catalog | None = None, registry: Any = None) -> Any:
    """The ASGI app serving ``config.envs`` (run it with uvicorn, or ``rolloutgym serve``)."""
    config = config or ServeConfig()
    catalog = catalog or Catalog(config.envs, registry=registry, env_kwargs=config.env_kwargs)
    manager = SessionManager(
        catalog,
        max_sessions=config.max_sessions,
        max_sessions_per_owner=config.max_sessions_per_owner,
        idle_timeout=config.idle_timeout,
        allow_env_kwargs=config.allow_env_kwargs,
        hide_task_data=not config.expose_task_items,
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

    # The route table: each route needs the token unless marked public (guard_routes, after routing).
    routes = [
        public_route(Route("/health", _handled(server.health, manager), methods=["GET"])),
        Route("/metrics", _handled(server.metrics, manager)),
        Route("/envs", _handled(server.envs, manager)),
        Route("/envs/{env_path:path}/tasks", _handled(server.tasks, manager)),
        Route("/envs/{env_path:path}", _handled(server.env, manager)),
        Route("/sessions", _handled(server.sessions, manager), methods=["GET", "POST"]),
        Route("/sessions/{session_id}", _handled(server.session_call, manager), methods=["GET", "DELETE"]),
        Route("/sessions/{session_id}/{operation}", _handled(server.session_call, manager), methods=["POST"]),
        WebSocketRoute("/ws", _AsgiEndpoint(server.websocket)),
        *openenv_routes(server),
        *ors_routes(server, _handled),
    ]
    guard_routes(routes)
    app = Starlette(routes=routes, lifespan=lifespan)
    app.router.redirect_slashes = False  # a path is answered as spelled, or not at all
    app.state.manager = manager
    app.state.catalog = catalog
    app.state.config = config

    async def not_found(request: Request, exc: Exception) -> Response:
        if not isinstance(request.scope.get(OWNER_SCOPE_KEY), str):
            return _unauthorized()
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
        if not isinstance(request.scope.get(OWNER_SCOPE_KEY), str):
            return _unauthorized()
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
    guarded = AccessGuard(app, Credentials(config.tokens))
    guarded.state = app.state  # type: ignore[attr-defined]
    return guarded
