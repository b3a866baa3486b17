"""``Client`` and ``AsyncClient``: the platform's API from Python (httpx), by the rollout SDK's method names.

A redirect or an HTML page in answer to an API call means the endpoint is not the API (a
login page, a proxy): it is reported as an :class:`AuthenticationError`, as the SDK does.

``follow_run`` queues a run and streams it, in one request: the queued run, its progress, its
end (what ``rolloutgym run --remote`` shows). ``watch_run`` (``watch_job``) long-polls: the
platform answers as soon as the run's state or progress differs from what the caller saw;
``wait_run`` (``wait_job``) long-polls for its end (``?until=ended``: one request, answered when
the run ends or after 25 s), with no sleeping between requests.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx

from . import credentials
from .envfiles import push_payload
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


class Client(_Base):
    """The platform's API. ``Client(endpoint=None, api_key=None)`` reads the credentials file and env vars."""

    def __init__(self, endpoint: str | None = None, api_key: str | None = None, *, timeout: float = 60.0) -> None:
        super().__init__(endpoint, api_key, timeout)
        self._http = httpx.Client(**self._options)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            return _check(self._http.request(method, path, **kwargs))
        except httpx.TransportError as exc:
            raise PlatformError(f"cannot reach the platform at {self.endpoint}: {exc}") from None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def whoami(self) -> dict[str, Any]:
        return self._call("GET", "/api/whoami")

    def push(self, env: str | Path, *, include: list[Path] | None = None, slug: str | None = None) -> dict[str, Any]:
        """Upload an env file (.py/.json/.jsonl, with the data files it names) or a registered env id."""
        return self._call("POST", "/api/envs", json=push_payload(str(env), include, slug))

    def list_envs(self) -> list[dict[str, Any]]:
        return self._call("GET", "/api/envs")

    def get_env(self, slug: str) -> dict[str, Any]:
        return self._call("GET", f"/api/envs/{slug}")

    def create_run(self, env_slug: str, model: str, n: int = 1, **options: Any) -> dict[str, Any]:
        """Queue a run of ``n`` rollouts per task; ``options``: limit, seed, split, tasks, max_steps, ..."""
        return self._call("POST", "/api/runs", json=_run_body(env_slug, model, n, options))

    def get_run(self, run_id: str) -> dict[str, Any]:
        return self._call("GET", f"/api/runs/{run_id}")

    def watch_run(
        self, run_id: str, *, state: str | None = None, done: int | None = None, timeout: float = 25.0
    ) -> dict[str, Any]:
        """The run once its state or ``done`` count differs from ``state``/``done`` (by default: from now), at once
        when it has ended, else after ``timeout`` seconds (at most 60) with no change."""
        params = _watch_params(state, done, timeout)
        return self._call("GET", f"/api/runs/{run_id}/wait", params=params, timeout=timeout + 30)

    def wait_run(self, run_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        """Follow the run until it has ended (or ``timeout`` seconds have passed); the run's last state."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:  # each answer: the run has ended, or the long-poll's timeout passed
            params = _end_params(deadline)
            run = self._call("GET", f"/api/runs/{run_id}/wait", params=params, timeout=params["timeout"] + 30)
            if run["state"] not in ACTIVE or _left(deadline) <= 0:
                return run

    def run_to_end(
        self, env_slug: str, model: str, n: int = 1, *, wait_timeout: float | None = None, **options: Any
    ) -> dict[str, Any]:
        """Queue a run and follow it to its end (or for ``wait_timeout`` seconds), starting in the same request
        (``POST /api/runs?until=ended``): ``create_run`` then ``wait_run`` with one request fewer."""
        deadline = None if wait_timeout is None else time.monotonic() + wait_timeout
        params = _end_params(deadline)
        body = _run_body(env_slug, model, n, options)
        run = self._call("POST", "/api/runs", json=body, params=params, timeout=params["timeout"] + 30)
        if run["state"] not in ACTIVE or _left(deadline) <= 0:
            return run
        return self.wait_run(run["runId"], timeout=None if deadline is None else _left(deadline))

    def follow_run(
        self, env_slug: str, model: str, n: int = 1, *, progress: bool = True, **options: Any
    ) -> Iterator[dict[str, Any]]:
        """Queue a run and follow it in one streamed request (``POST /api/runs?until=ended&stream=progress``):
        yields the queued run at once, (with ``progress``) the run at each change of its state or progress, and
        the run once it has ended. Closing the iterator early (Ctrl-C) leaves the run going on; a stream that
        breaks off before the end is followed on by long-polls."""
        body, run = _run_body(env_slug, model, n, options), None
        try:
            with self._http.stream(
                "POST", "/api/runs", json=body, params=_follow_params(progress), timeout=STREAM_TIMEOUT
            ) as response:
                if not _is_stream(response):
                    response.read()
                    raise _stream_error(response)
                for line in response.iter_lines():
                    if line.strip():
                        run = json.loads(line)
                        yield run
        except httpx.TransportError as exc:
            if run is None:
                raise PlatformError(f"cannot reach the platform at {self.endpoint}: {exc}") from None
        if run is None:
            raise PlatformError(f"{self.endpoint} ended the stream before the run was queued")
        while run["state"] in ACTIVE:
            run = self.watch_run(run["runId"], state=run["state"], done=run["done"])
            yield run

    def list_runs(self, *, limit: int = 100, env: str | None = None) -> list[dict[str, Any]]:
        params = {"limit": limit} | ({"env": env} if env else {})
        return self._call("GET", "/api/runs", params=params)

    def download_run(self, run_id: str, path: str | Path) -> Path:
        """Write the run's run file to ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self._call("GET", f"/api/runs/{run_id}/file"))
        return path

    def passing_rollout_ids(self, run_id: str, *, threshold: float = 1.0) -> list[str]:
        """The ids (``TASK:MEMBER``) of the run's rollouts that scored at least ``threshold``."""
        return self._call("GET", f"/api/runs/{run_id}/passing", params={"threshold": threshold})

    def create_training_job(
        self,
        source_run_id: str,
        rollout_ids: list[str] | None = None,
        base_model: str = "hf:tiny",
        method: str = "sft",
        suffix: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Queue a training job on the run (``options``: steps, learning_rate, batch_size, ...)."""
        body = _job_body(
            source_run_id=source_run_id,
            rollout_ids=rollout_ids,
            base_model=base_model,
            method=method,
            suffix=suffix,
            options=options or None,
        )
        return self._call("POST", "/api/jobs", json=body)

    def get_job(self, job_id: str) -> dict[str, Any]:
        return self._call("GET", f"/api/jobs/{job_id}")

    def watch_job(self, job_id: str, *, state: str | None = None, timeout: float = 25.0) -> dict[str, Any]:
        """The job (as ``get_job``) once its state differs from ``state`` (by default: from now), or after
        ``timeout`` seconds."""
        params = _watch_params(state, None, timeout)
        return self._call("GET", f"/api/jobs/{job_id}/wait", params=params, timeout=timeout + 30)

    def wait_job(self, job_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        """Follow the job until it has ended (or ``timeout`` seconds have passed); the job's last state."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            params = _end_params(deadline)
            job = self._call("GET", f"/api/jobs/{job_id}/wait", params=params, timeout=params["timeout"] + 30)
            if job["state"] not in ACTIVE or _left(deadline) <= 0:
                return job

    def list_jobs(self) -> list[dict[str, Any]]:
        return self._call("GET", "/api/jobs")


class AsyncClient(_Base):
    """The asynchronous twin of :class:`Client` (same methods, awaited)."""

    def __init__(self, endpoint: str | None = None, api_key: str | None = None, *, timeout: float = 60.0) -> None:
        super().__init__(endpoint, api_key, timeout)
        self._http = httpx.AsyncClient(**self._options)

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            return _check(await self._http.request(method, path, **kwargs))
        except httpx.TransportError as exc:
            raise PlatformError(f"cannot reach the platform at {self.endpoint}: {exc}") from None

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def whoami(self) -> dict[str, Any]:
        return await self._call("GET", "/api/whoami")

    async def push(self, env: str | Path, *, include: list[Path] | None = None, slug: str | None = None) -> Any:
        return await self._call("POST", "/api/envs", json=push_payload(str(env), include, slug))

    async def list_envs(self) -> list[dict[str, Any]]:
        return await self._call("GET", "/api/envs")

    async def get_env(self, slug: str) -> dict[str, Any]:
        return await self._call("GET", f"/api/envs/{slug}")

    async def create_run(self, env_slug: str, model: str, n: int = 1, **options: Any) -> dict[str, Any]:
        return await self._call("POST", "/api/runs", json=_run_body(env_slug, model, n, options))

    async def get_run(self, run_id: str) -> dict[str, Any]:
        return await self._call("GET", f"/api/runs/{run_id}")

    async def watch_run(
        self, run_id: str, *, state: str | None = None, done: int | None = None, timeout: float = 25.0
    ) -> dict[str, Any]:
        params = _watch_params(state, done, timeout)
        return await self._call("GET", f"/api/runs/{run_id}/wait", params=params, timeout=timeout + 30)

    async def wait_run(self, run_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            params = _end_params(deadline)
            run = await self._call("GET", f"/api/runs/{run_id}/wait", params=params, timeout=params["timeout"] + 30)
            if run["state"] not in ACTIVE or _left(deadline) <= 0:
                return run

    async def run_to_end(
        self, env_slug: str, model: str, n: int = 1, *, wait_timeout: float | None = None, **options: Any
    ) -> dict[str, Any]:
        deadline = None if wait_timeout is None else time.monotonic() + wait_timeout
        params = _end_params(deadline)
        body = _run_body(env_slug, model, n, options)
        run = await self._call("POST", "/api/runs", json=body, params=params, timeout=params["timeout"] + 30)
        if run["state"] not in ACTIVE or _left(deadline) <= 0:
            return run
        return await self.wait_run(run["runId"], timeout=None if deadline is None else _left(deadline))

    async def follow_run(
        self, env_slug: str, model: str, n: int = 1, *, progress: bool = True, **options: Any
    ) -> AsyncIterator[dict[str, Any]]:
        body, run = _run_body(env_slug, model, n, options), None
        try:
            async with self._http.stream(
                "POST", "/api/runs", json=body, params=_follow_params(progress), timeout=STREAM_TIMEOUT
            ) as response:
                if not _is_stream(response):
                    await response.aread()
                    raise _stream_error(response)
                async for line in response.aiter_lines():
                    if line.strip():
                        run = json.loads(line)
                        yield run
        except httpx.TransportError as exc:
            if run is None:
                raise PlatformError(f"cannot reach the platform at {self.endpoint}: {exc}") from None
        if run is None:
            raise PlatformError(f"{self.endpoint} ended the stream before the run was queued")
        while run["state"] in ACTIVE:
            run = await self.watch_run(run["runId"], state=run["state"], done=run["done"])
            yield run

    async def list_runs(self, *, limit: int = 100, env: str | None = None) -> list[dict[str, Any]]:
        params = {"limit": limit} | ({"env": env} if env else {})
        return await self._call("GET", "/api/runs", params=params)

    async def download_run(self, run_id: str, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(await self._call("GET", f"/api/runs/{run_id}/file"))
        return path

    async def passing_rollout_ids(self, run_id: str, *, threshold: float = 1.0) -> list[str]:
        return await self._call("GET", f"/api/runs/{run_id}/passing", params={"threshold": threshold})

    async def create_training_job(
        self,
        source_run_id: str,
        rollout_ids: list[str] | None = None,
        base_model: str = "hf:tiny",
        method: str = "sft",
        suffix: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        body = _job_body(
            source_run_id=source_run_id,
            rollout_ids=rollout_ids,
            base_model=base_model,
            method=method,
            suffix=suffix,
            options=options or None,
        )
        return await self._call("POST", "/api/jobs", json=body)

    async def get_job(self, job_id: str) -> dict[str, Any]:
        return await self._call("GET", f"/api/jobs/{job_id}")

    async def watch_job(self, job_id: str, *, state: str | None = None, timeout: float = 25.0) -> dict[str, Any]:
        params = _watch_params(state, None, timeout)
        return await self._call("GET", f"/api/jobs/{job_id}/wait", params=params, timeout=timeout + 30)

    async def wait_job(self, job_id: str, *, timeout: float | None = None) -> dict[str, Any]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            params = _end_params(deadline)
            job = await self._call("GET", f"/api/jobs/{job_id}/wait", params=params, timeout=params["timeout"] + 30)
            if job["state"] not in ACTIVE or _left(deadline) <= 0:
                return job

    async def list_jobs(self) -> list[dict[str, Any]]:
        return await self._call("GET", "/api/jobs")
