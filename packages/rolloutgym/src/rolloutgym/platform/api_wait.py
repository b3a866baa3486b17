"""The API's long-poll, ``GET /api/runs/ID/wait`` and ``/api/jobs/ID/wait``: answered as soon as a worker reports
that the row changed (:class:`~.notify.Hub`), instead of the client polling."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from . import db
from .api_common import ApiError, Platform, _key, _platform, _token
from .api_jobs import _job_answer
from .api_runs import _run_answer, queue_run
from .models import ApiKey


@dataclass
class WaitFor:
    """What a waiting client asked for: ``timeout`` (seconds, at most 60); the ``state`` and ``done`` it has
    already seen; ``ended``: answer only once the row has ended (``?until=ended``), not on each change."""

    timeout: float
    state: str | None
    done: int | None
    ended: bool


def _wait_params(request: Request) -> WaitFor:
    params = request.query_params
    until = params.get("until", "change")
    if until not in ("change", "ended"):
        raise ApiError(400, f"until must be change or ended, got {until!r}")
    try:
        timeout = min(max(float(params.get("timeout", "25")), 0.0), 60.0)
        done = params.get("done")
        return WaitFor(timeout, params.get("state"), None if done is None else int(done), until == "ended")
    except ValueError:
        raise ApiError(
            400, "timeout must be a number of seconds and done a whole number, e.g. ?timeout=25&done=3"
        ) from None


async def _wait_key(request: Request) -> ApiKey:
    """The request's key: from the key cache on the event loop when it is there, else looked up in the pool."""
    cached = _platform(request).keys.cached(_token(request)) if _token(request) else None
    return cached if cached is not None else await run_in_threadpool(_key, request)


async def _wait(
    request: Request,
    topic: str,
    read: Callable[[Platform, str, str], dict[str, Any]],
    queue: Callable[[], Awaitable[dict[str, Any]]] | None = None,
    row_id: str | None = None,
) -> JSONResponse:
    """Answer the row once its ``state`` (or ``done``) differs from what the client saw (by default: from the
    first read), once it has ended (succeeded or failed), or at the timeout; with ``until=ended`` only once it
    has ended, or at the timeout.

    The handler awaits the hub's event for the row (a worker's ``changed`` message) and re-reads
    the database when it fires, and at least every ``poll`` seconds without one; it holds no
    thread while it waits, so any number of clients can wait at once. A client waiting for the
    end is not even read for while the worker's messages say the row is still running.

    ``queue`` (with the new row's ``row_id``): create the row first, once the handler watches it (a
    worker's report of its end cannot come before), and start from its answer instead of a read.
    """
    wait = _wait_params(request)
    platform = _platform(request)
    key = await _wait_key(request)
    row_id = row_id or request.path_params["row_id"]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait.timeout
    state, done, look = wait.state, wait.done, True
    with platform.hub.watch(f"{topic} {row_id}") as changed:
        if queue is not None:
            answer = await queue()
            state, done, look = answer["state"], answer.get("done"), False
        while True:
            if look:
                changed.clear()  # before the read: a change reported during it makes the next wait return at once
                answer = await run_in_threadpool(read, platform, key.org, row_id)
                state = answer["state"] if state is None else state
                done = answer.get("done") if done is None else done
            remaining = deadline - loop.time()
            ended = answer["state"] not in ("queued", "running")  # nothing more will change
            moved = not wait.ended and (answer["state"] != state or answer.get("done") != done)
            if ended or moved or remaining <= 0:
                return JSONResponse(answer)
            try:
                await asyncio.wait_for(changed.wait(), min(remaining, platform.poll))
            except TimeoutError:
                look = True
                continue
            look = not (wait.ended and changed.still_active)
            if not look:  # still running, as the worker said: wait on (no await since the wake-up: none missed)
                changed.clear()


async def create_run(request: Request) -> JSONResponse:
    """``POST /api/runs``: queue a run (201, the queued run); with ``?until=ended`` (``Client.run_to_end``) follow
    it in the same request and answer as ``GET /api/runs/ID/wait?until=ended`` does (200, the run once it has
    ended, or as it is at the timeout): one request instead of two."""
    if request.query_params.get("until") != "ended":
        return JSONResponse(await queue_run(request), status_code=201)
    _wait_params(request)  # bad parameters answer 400 before anything is queued
    run_id = db.new_id("run")
    return await _wait(request, "run", _run_answer, lambda: queue_run(request, run_id), run_id)


async def wait_run(request: Request) -> JSONResponse:
    return await _wait(request, "run", _run_answer)


async def wait_job(request: Request) -> JSONResponse:
    return await _wait(request, "job", _job_answer)
