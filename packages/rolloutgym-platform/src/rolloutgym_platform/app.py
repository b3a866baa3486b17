"""The platform's HTTP API (Starlette): keys, envs and their versions, runs, jobs.

Every ``/api`` request carries ``Authorization: Bearer rk_...``; a key sees only its
organisation's rows (another organisation's ids answer 404, as unknown ones do). Endpoints
are plain functions, run by Starlette in its thread pool, over synchronous SQLAlchemy
sessions; the few that must be ``async`` (they read a JSON body, or long-poll) hand every
database call to that thread pool too, so no query ever blocks the event loop that serves all
connections. Pushed files are stored and hashed here, never imported: workers import them.

Queuing a run or a job wakes the idle workers (:class:`~.notify.Hub`); ``GET
/api/runs/ID/wait`` (and ``/api/jobs/ID/wait``) answers as soon as a worker reports that the
row changed, instead of the client polling.

This module holds the routes and the app; the endpoints are in ``api_envs``, ``api_runs``,
``api_jobs`` and ``api_wait``, what they share (the key, the JSON shapes) in ``api_common``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from . import db
from .api_common import ApiError, Platform, _key
from .api_envs import get_env, list_envs, push_env
from .api_input import MAX_PUSH
from .api_jobs import create_job, get_job, list_jobs
from .api_runs import count_rows, get_run, list_runs, passing_rollouts, run_file
from .api_wait import create_run, wait_job, wait_run
from .notify import Hub
from .pages import ROUTES
from .trust import TrustError


def health(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


def whoami(request: Request) -> JSONResponse:
    key = _key(request)
    return JSONResponse({"org": key.org, "name": key.name, "scopes": key.scopes.split(",")})


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, (ApiError, TrustError))
    return JSONResponse({"error": exc.message}, status_code=exc.status)


async def _no_route(request: Request, exc: Exception) -> JSONResponse:
    """An unknown path or method answers JSON, like every other refusal (Starlette's default is plain text)."""
    status = getattr(exc, "status_code", 404)
    what = "no such endpoint" if status == 404 else f"{request.method} is not allowed here"
    return JSONResponse({"error": f"{what}: {request.url.path[:80]!r}"}, status_code=status)


def create_app(
    data: str | Path, database: str | None = None, *, poll: float = 1.0, max_push: int = MAX_PUSH
) -> Starlette:
    """The API app over DATA (and ``database``, default SQLite in DATA); migrates on creation.

    It binds the wake-up hub's socket and writes ``DATA/notify.json`` now, so the workers
    started after it find it; a waiting client's answer re-reads the database every ``poll`` s.
    """
    routes = [
        Route("/api/health", health),
        Route("/api/whoami", whoami),
        Route("/api/envs", push_env, methods=["POST"]),
        Route("/api/envs", list_envs),
        Route("/api/envs/{slug:path}", get_env),
        Route("/api/runs", create_run, methods=["POST"]),
        Route("/api/runs", list_runs),
        Route("/api/runs/{run_id}", get_run),
        Route("/api/runs/{row_id}/wait", wait_run),
        Route("/api/runs/{run_id}/file", run_file),
        Route("/api/runs/{run_id}/passing", passing_rollouts),
        Route("/api/jobs", create_job, methods=["POST"]),
        Route("/api/jobs", list_jobs),
        Route("/api/jobs/{job_id}", get_job),
        Route("/api/jobs/{row_id}/wait", wait_job),
        Route("/api/stats", count_rows),
        *ROUTES,
    ]
    sessions = db.open_database(data, database)
    platform = Platform(Path(data).resolve(), sessions, Hub(data, sessions.kw["bind"]), poll, max_push=max_push)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        platform.hub.start()
        try:
            yield
        finally:
            platform.hub.close()

    handlers: dict[Any, Any] = {ApiError: _api_error, TrustError: _api_error, 404: _no_route, 405: _no_route}
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    app.state.platform = platform
    return app
