"""What :class:`~rolloutgym.platform.client.Client` and :class:`~rolloutgym.platform.client.AsyncClient`
share: an answer checked, request bodies and parameters, and the request flows (long-polls to a run's or job's
end) that both run, one with blocking calls and one awaited."""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

import httpx

from . import credentials
from .errors import AuthenticationError, PlatformError, ResourceNotFound, ScopeError


def _check(response: httpx.Response) -> Any:
    """The JSON of a successful answer; a one-line :class:`PlatformError` subclass otherwise."""
    if response.is_redirect:
        where = response.headers.get("location", "?")
        raise AuthenticationError(f"{response.request.url} redirected to {where}: not authenticated (check the key)")
    kind = response.headers.get("content-type", "")
    if "text/html" in kind:
        raise AuthenticationError(
            f"{response.request.url} answered with an HTML page, not the API: not authenticated or wrong endpoint"
        )
    if response.status_code < 400:
        return response.json() if kind.startswith("application/json") else response.content
    try:
        message = response.json().get("error") or response.text
    except ValueError:
        message = response.text.strip()[:200] or response.reason_phrase
    errors = {401: AuthenticationError, 403: ScopeError, 404: ResourceNotFound}
    raise errors.get(response.status_code, PlatformError)(message, status=response.status_code)


def _run_body(env_slug: str, model: str, n: int, options: dict[str, Any]) -> dict[str, Any]:
    return {"env_slug": env_slug, "model": model, "n": n, **{k: v for k, v in options.items() if v is not None}}


def _job_body(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


ACTIVE = ("queued", "running")


def _watch_params(state: str | None, done: int | None, timeout: float) -> dict[str, Any]:
    params: dict[str, Any] = {"timeout": timeout}
    return params | ({"state": state} if state else {}) | ({"done": done} if done is not None else {})


def _end_params(deadline: float | None) -> dict[str, Any]:
    """A long-poll answered only once the row has ended (or at its timeout): one request for a short run."""
    return {"until": "ended", "timeout": _left(deadline)}


def _left(deadline: float | None) -> float:
    """The long-poll timeout of the next request: 25 s, or what is left until ``deadline``."""
    return 25.0 if deadline is None else max(0.0, min(25.0, deadline - time.monotonic()))


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


# A request flow: a generator that yields each request as (method, path, keywords) and is sent its answer; what it
# returns is the result. Client and AsyncClient run the same flows (_drive), one with blocking calls, one awaited.
_Flow = Generator[tuple[str, str, dict[str, Any]], Any, Any]


def _until_ended(path: str, deadline: float | None) -> _Flow:
    """Long-poll ``path`` until its run or job has ended (or ``deadline`` has passed); its last state."""
    while True:  # each answer: the row has ended, or the long-poll's timeout passed
        params = _end_params(deadline)
        row = yield "GET", path, {"params": params, "timeout": params["timeout"] + 30}
        if row["state"] not in ACTIVE or _left(deadline) <= 0:
            return row


# How long passing_rollout_ids waits for a run to end by default (seconds).
PASSING_WAIT = 3600.0


def _passing(run_id: str, threshold: float, timeout: float | None) -> _Flow:
    """``passing_rollout_ids``: wait for the run to end (at most ``timeout`` s), then its passing rollouts; a run
    still going at the deadline is an error, never a partial list."""
    run = yield from _until_ended(f"/api/runs/{run_id}/wait", _deadline(timeout))
    if run["state"] in ACTIVE:
        progress = f"{run.get('done') or 0}/{run.get('total') or '?'} tasks"
        raise PlatformError(
            f"run {run_id} has not finished after {timeout:g} s ({run['state']}, {progress}); its passing rollouts "
            "are known once it ends: call passing_rollout_ids again, or with a longer timeout="
        )
    return (yield "GET", f"/api/runs/{run_id}/passing", {"params": {"threshold": threshold}})


def _queued_to_end(body: dict[str, Any], deadline: float | None) -> _Flow:
    """Queue a run and follow it to its end in the same request (``POST /api/runs?until=ended``), then by
    long-polls until it has ended or ``deadline`` has passed."""
    params = _end_params(deadline)
    run = yield "POST", "/api/runs", {"json": body, "params": params, "timeout": params["timeout"] + 30}
    if run["state"] not in ACTIVE or _left(deadline) <= 0:
        return run
    left = None if deadline is None else _left(deadline)
    return (yield from _until_ended(f"/api/runs/{run['runId']}/wait", _deadline(left)))


def _follow_params(progress: bool) -> dict[str, Any]:
    return {"until": "ended", "stream": "progress" if progress else "end"}


# A stream sends a line at least every 25 s (the platform's keep-alive): a read that waits much longer is lost.
STREAM_TIMEOUT = httpx.Timeout(60.0, read=60.0)


def _stream_error(response: httpx.Response) -> PlatformError:
    """The error of an answer that is not the stream of a run (``response`` read)."""
    _check(response)  # a redirect, an HTML page, an error status: their own errors
    return PlatformError(f"{response.request.url} answered {response.headers.get('content-type')}, not a stream")


def _is_stream(response: httpx.Response) -> bool:
    return response.status_code == 200 and "ndjson" in response.headers.get("content-type", "")


class _Base:
    def __init__(self, endpoint: str | None, api_key: str | None, timeout: float) -> None:
        self.endpoint, self._api_key = credentials.resolve(endpoint, api_key)
        self._options = {
            "base_url": self.endpoint,
            "headers": {"Authorization": f"Bearer {self._api_key}", "Accept": "application/json"},
            "timeout": timeout,
            "follow_redirects": False,
        }
