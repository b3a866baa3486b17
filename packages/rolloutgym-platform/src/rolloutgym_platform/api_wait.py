"""The API's long-poll, ``GET /api/runs/ID/wait`` and ``/api/jobs/ID/wait``: answered as soon as a worker reports
that the row changed (:class:`~.notify.Hub`), instead of the client polling."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from . import api_input, db
from .api_common import ApiError, Platform, _key, _platform, _token
from .api_jobs import _job_answer
from .api_runs import _run_answer, queue_run
from .models import ApiKey
from .notify import ACTIVE, Watch

KEEPALIVE = 25.0  # seconds: a stream of progress sends the run at least this often, changed or not


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
    timeout = min(api_input.finite(params.get("timeout", "25"), "timeout", 0.0, 1e9, query=True), 60.0)
    done = params.get("done")
    done_count = None if done is None else api_input.whole(done, "done", 0, 2**31, query=True)
    return WaitFor(timeout, api_input.query_text(request, "state", 16), done_count, until == "ended")


async def _wait_key(request: Request) -> ApiKey:
    """The request's key: from the key cache on the event loop when it is there, else looked up in the pool."""
    cached = _platform(request).keys.cached(_token(request)) if _token(request) else None
    return cached if cached is not None else await run_in_threadpool(_key, request)


async def _next(
    platform: Platform,
    org: str,
    row_id: str,
    read: Callable[[Platform, str, str], dict[str, Any]],
    changed: Watch,
    wait: WaitFor,
    answer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The row once its ``state`` (or ``done``) differs from ``wait``'s (by default: from the first read), once it
    has ended (succeeded or failed), or at the timeout; with ``wait.ended`` only once it has ended, or at the
    timeout. ``answer``: the row as last read, when the caller has it (no first read).

    It awaits the hub's event for the row (a worker's ``changed`` message) and re-reads the
    database when it fires, and at least every ``poll`` seconds without one; it holds no thread
    while it waits, so any number of clients can wait at once. A client waiting for the end is
    not even read for while the worker's messages say the row is still running.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait.timeout
    state, done, look = wait.state, wait.done, answer is None
    while True:
        if look:
            changed.clear()  # before the read: a change reported during it makes the next wait return at once
            answer = await run_in_threadpool(read, platform, org, row_id)
        assert answer is not None
        state = answer["state"] if state is None else state
        done = answer.get("done") if done is None else done
        remaining = deadline - loop.time()
        ended = answer["state"] not in ACTIVE  # nothing more will change
        moved = not wait.ended and (answer["state"] != state or answer.get("done") != done)
        if ended or moved or remaining <= 0:
            return answer
        try:
            await asyncio.wait_for(changed.wait(), min(remaining, platform.poll))
        except TimeoutError:
            look = True
            continue
        look = not (wait.ended and changed.still_active)
        if not look:  # still running, as the worker said: wait on (no await since the wake-up: none missed)
            changed.clear()


async def _wait(
    request: Request,
    topic: str,
    read: Callable[[Platform, str, str], dict[str, Any]],
) -> JSONResponse:
    """``GET /api/runs/ID/wait`` (``/api/jobs/ID/wait``): the row as :func:`_next` answers it."""
    wait = _wait_params(request)
    platform = _platform(request)
    key = await _wait_key(request)
    row_id = api_input.row_id(request.path_params["row_id"], topic)
    with platform.hub.watch(f"{topic} {row_id}") as changed:
        return JSONResponse(await _next(platform, key.org, row_id, read, changed, wait))


async def _queue_and_follow(request: Request, wait: WaitFor, progress: bool) -> AsyncIterator[dict[str, Any]]:
    """Queue the run once its watch is in place (a worker's report of its end cannot come before), then yield
    the queued run, with ``progress`` the run at each change, and the run once it has ended; without an end
    within ``wait.timeout`` the run as it is then (the client follows on with ``GET /api/runs/ID/wait``)."""
    platform = _platform(request)
    key = await _wait_key(request)
    run_id = db.new_id("run")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait.timeout
    with platform.hub.watch(f"run {run_id}") as changed:
        answer = await queue_run(request, run_id)
        yield answer
        while answer["state"] in ACTIVE and loop.time() < deadline:
            step = WaitFor(min(KEEPALIVE, deadline - loop.time()), answer["state"], answer["done"], not progress)
            answer = await _next(platform, key.org, run_id, _run_answer, changed, step, answer)
            yield answer


async def _stream(lines: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    async for answer in lines:
        yield json.dumps(answer).encode() + b"\n"


async def create_run(request: Request) -> Response:
    """``POST /api/runs``: queue a run (201, the queued run).

    With ``?until=ended`` (``Client.run_to_end``) follow it in the same request and answer as ``GET
    /api/runs/ID/wait?until=ended`` does (200, the run once it has ended, or as it is at the timeout): one
    request instead of two. With ``?until=ended&stream=end`` (or ``stream=progress``) the answer is a stream of
    lines (NDJSON) as they happen: the queued run at once, (with ``progress``) the run at each change of its
    state or progress, the run at least every 25 s, and the run once it has ended (or as it is at ``timeout``,
    when one is given: a stream has none by default); ``Client.follow_run`` and ``rolloutgym run --remote``
    read it. A client that goes away leaves the run queued or running.
    """
    until, stream = request.query_params.get("until"), request.query_params.get("stream")
    if until != "ended":
        if stream is not None:
            raise ApiError(400, "stream needs until=ended, e.g. ?until=ended&stream=progress")
        return JSONResponse(await queue_run(request), status_code=201)
    wait = _wait_params(request)  # bad parameters answer 400 before anything is queued
    if stream not in (None, "end", "progress"):
        raise ApiError(400, f"stream must be end or progress, got {stream!r}")
    if stream is not None and "timeout" not in request.query_params:
        wait.timeout = math.inf  # a stream lasts until the end of the run by default (its lines keep it alive)
    lines = _queue_and_follow(request, wait, progress=stream == "progress")
    if stream is None:  # one JSON answer: the last line
        last: dict[str, Any] = {}
        async for answer in lines:
            last = answer
        return JSONResponse(last)
    first = await anext(lines)  # errors (an unknown env, a missing scope) answer with their status, not a stream
    return StreamingResponse(_stream(_prepend(first, lines)), media_type="application/x-ndjson")


async def _prepend(first: dict[str, Any], rest: AsyncIterator[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    yield first
    async for answer in rest:
        yield answer


async def wait_run(request: Request) -> JSONResponse:
    return await _wait(request, "run", _run_answer)


async def wait_job(request: Request) -> JSONResponse:
    return await _wait(request, "job", _job_answer)
