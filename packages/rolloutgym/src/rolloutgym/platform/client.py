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
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx

from ._client_common import (
    ACTIVE,
    PASSING_WAIT,
    STREAM_TIMEOUT,
    _Base,
    _check,
    _deadline,
    _Flow,
    _follow_params,
    _is_stream,
    _job_body,
    _passing,
    _queued_to_end,
    _run_body,
    _stream_error,
    _until_ended,
    _watch_params,
)
from .envfiles import push_payload
from .errors import PlatformError


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

    def _drive(self, flow: _Flow) -> Any:
        """Run a request flow (:mod:`._client_common`) with blocking calls; what it returns."""
        answer = None
        while True:
            try:
                method, path, keywords = flow.send(answer)
            except StopIteration as stop:
                return stop.value
            answer = self._call(method, path, **keywords)

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
        return self._drive(_until_ended(f"/api/runs/{run_id}/wait", _deadline(timeout)))

    def run_to_end(
        self, env_slug: str, model: str, n: int = 1, *, wait_timeout: float | None = None, **options: Any
    ) -> dict[str, Any]:
        """Queue a run and follow it to its end (or for ``wait_timeout`` seconds), starting in the same request
        (``POST /api/runs?until=ended``): ``create_run`` then ``wait_run`` with one request fewer."""
        return self._drive(_queued_to_end(_run_body(env_slug, model, n, options), _deadline(wait_timeout)))

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

    def passing_rollout_ids(
        self, run_id: str, *, threshold: float = 1.0, timeout: float | None = PASSING_WAIT
    ) -> list[str]:
        """The ids (``TASK:MEMBER``) of the run's rollouts that scored at least ``threshold``, once the run has ended:
        called on a queued or running run it waits for its end (at most ``timeout`` seconds, ``None``: no limit),
        then raises :class:`PlatformError` if the run is still going; never a partial list."""
        return self._drive(_passing(run_id, threshold, timeout))

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
        return self._drive(_until_ended(f"/api/jobs/{job_id}/wait", _deadline(timeout)))

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

    async def _drive(self, flow: _Flow) -> Any:
        """Run a request flow (:mod:`._client_common`) with awaited calls; what it returns."""
        answer = None
        while True:
            try:
                method, path, keywords = flow.send(answer)
            except StopIteration as stop:
                return stop.value
            answer = await self._call(method, path, **keywords)

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
        return await self._drive(_until_ended(f"/api/runs/{run_id}/wait", _deadline(timeout)))

    async def run_to_end(
        self, env_slug: str, model: str, n: int = 1, *, wait_timeout: float | None = None, **options: Any
    ) -> dict[str, Any]:
        return await self._drive(_queued_to_end(_run_body(env_slug, model, n, options), _deadline(wait_timeout)))

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

    async def passing_rollout_ids(
        self, run_id: str, *, threshold: float = 1.0, timeout: float | None = PASSING_WAIT
    ) -> list[str]:
        return await self._drive(_passing(run_id, threshold, timeout))

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
        return await self._drive(_until_ended(f"/api/jobs/{job_id}/wait", _deadline(timeout)))

    async def list_jobs(self) -> list[dict[str, Any]]:
        return await self._call("GET", "/api/jobs")
