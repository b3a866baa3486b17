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
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from . import db
from .envfiles import SLUG, content_version, env_slug
from .errors import PlatformError
from .models import ApiKey, EnvVersion, Job, RunRow
from .notify import Hub
from .pages import ROUTES

METHODS = ("sft", "dpo", "grpo")


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class KeyCache:
    """The API keys found lately, by their sha256, for ``ttl`` seconds: most requests need no key query.

    Only keys that exist are kept (a key minted a moment ago is found at once); a key's rows
    never change after it is minted.
    """

    def __init__(self, ttl: float = 10.0, size: int = 10_000) -> None:
        self.ttl, self.size = ttl, size
        self._keys: dict[str, tuple[float, ApiKey]] = {}

    def cached(self, token: str) -> ApiKey | None:
        """The key if it was found within ``ttl`` seconds (no query: callable on the event loop), else None."""
        hit = self._keys.get(db.hash_key(token))
        return hit[1] if hit is not None and time.monotonic() - hit[0] < self.ttl else None

    def find(self, sessions: sessionmaker[Session], token: str) -> ApiKey | None:
        key = self.cached(token)
        if key is not None:
            return key
        digest = db.hash_key(token)
        now = time.monotonic()
        with sessions() as session:
            key = session.scalars(select(ApiKey).where(ApiKey.key_hash == digest)).first()
        if key is not None:
            if len(self._keys) >= self.size:
                self._keys.clear()
            self._keys[digest] = (now, key)
        return key


@dataclass
class Platform:
    """What the endpoints share: the data folder, the session factory, the wake-up hub, the poll interval."""

    data: Path
    sessions: sessionmaker[Session]
    hub: Hub
    poll: float = 1.0  # a waiting client's answer re-reads the database at least this often
    keys: KeyCache = field(default_factory=KeyCache)


def _platform(request: Request) -> Platform:
    return request.app.state.platform


def _token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    return header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""


def _key(request: Request, scope: str | None = None) -> ApiKey:
    token = _token(request)
    if not token:
        raise ApiError(401, "no API key: run 'rolloutgym login' or set ROLLOUTGYM_API_KEY")
    key = _platform(request).keys.find(_platform(request).sessions, token)
    if key is None:
        raise ApiError(401, "the API key is not valid here: mint one with 'rolloutgym platform keys create'")
    if scope and scope not in key.scopes.split(","):
        raise ApiError(
            403, f"this key lacks the {scope!r} scope; mint one with 'rolloutgym platform keys create --scope {scope}'"
        )
    return key


def _own(session: Session, model: Any, row_id: str, org: str, what: str) -> Any:
    row = session.get(model, row_id)
    if row is None or row.org != org:
        raise ApiError(404, f"no {what} {row_id!r} (list them with 'rolloutgym {what}s --remote')")
    return row


def _stamp(value: Any) -> str | None:
    return value.isoformat(timespec="seconds") + "Z" if value is not None else None


def env_json(version: EnvVersion) -> dict[str, Any]:
    return {
        "slug": version.slug,
        "version": version.version,
        "kind": version.kind,
        "files": version.files,
        "createdAt": _stamp(version.created_at),
    }


def run_json(run: RunRow) -> dict[str, Any]:
    return {
        "id": run.id,
        "runId": run.id,
        "envSlug": run.env_slug,
        "envVersion": (run.options or {}).get("env_version"),
        "policy": run.policy,
        "model": run.policy,
        "n": run.n,
        "state": run.state,
        "status": run.state,
        "total": run.total,
        "done": run.done,
        "passes": run.passes,
        "trajectories": run.trajectories,
        "errors": run.errors,
        "passRate": run.pass_rate,
        "error": run.error,
        "attempts": run.attempts,
        "options": {k: v for k, v in (run.options or {}).items() if k != "env_version"},
        "createdAt": _stamp(run.created_at),
        "finishedAt": _stamp(run.finished_at),
    }


def job_json(job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "sourceRunId": job.source_run_id,
        "method": job.method,
        "baseModel": job.base_model,
        "suffix": job.suffix,
        "state": job.state,
        "status": job.state,
        "error": job.error,
        "model": f"job:{job.id}" if job.state == "succeeded" else None,
        "rolloutIds": job.rollout_ids,
        "result": job.result,
        "options": job.options,
        "createdAt": _stamp(job.created_at),
        "finishedAt": _stamp(job.finished_at),
    }


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(400, "the request body is not JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


def health(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


def whoami(request: Request) -> JSONResponse:
    key = _key(request)
    return JSONResponse({"org": key.org, "name": key.name, "scopes": key.scopes.split(",")})


def _store_files(platform: Platform, org: str, slug: str, main: str, files: dict[str, bytes]) -> tuple[str, str]:
    version = content_version(files)
    folder = platform.data / "envs" / org / slug.replace("/", "__") / version
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        if "/" in name or "\\" in name or name.startswith("."):
            raise ApiError(400, f"file name {name!r} is not allowed; push files by their base names")
        (folder / name).write_bytes(content)
    return version, str((folder / main).relative_to(platform.data))


def _decode_push(platform: Platform, org: str, body: dict[str, Any]) -> tuple[str, str, str, str, list[str]]:
    """(slug, version, kind, entry, file names) of a push body."""
    if body.get("kind") == "id":
        env_id = str(body.get("id") or "")
        if not SLUG.match(env_id):
            raise ApiError(400, f"{env_id!r} is not an env id, e.g. toy/arith-v0")
        from importlib.metadata import version as installed

        return body.get("slug") or env_id, content_version({env_id: installed("rolloutgym").encode()}), "id", env_id, []
    main = str(body.get("main") or "")
    try:
        files = {name: base64.b64decode(text) for name, text in dict(body.get("files") or {}).items()}
    except (ValueError, TypeError):
        raise ApiError(400, "the pushed files are not base64") from None
    if main not in files:
        raise ApiError(400, "the push names no env file")
    try:
        slug = body.get("slug") or env_slug(main, files[main])
    except PlatformError as exc:
        raise ApiError(400, str(exc)) from None
    version, entry = _store_files(platform, org, slug, main, files)
    return slug, version, "python" if main.endswith(".py") else "json", entry, sorted(files)


async def push_env(request: Request) -> JSONResponse:
    return await run_in_threadpool(_push_env, request, await _body(request))


def _push_env(request: Request, body: dict[str, Any]) -> JSONResponse:
    key = _key(request, "push")
    platform = _platform(request)
    slug, version, kind, entry, names = _decode_push(platform, key.org, body)
    with platform.sessions.begin() as session:
        existing = session.scalars(
            select(EnvVersion).where(EnvVersion.org == key.org, EnvVersion.slug == slug, EnvVersion.version == version)
        ).first()
        created = existing is None
        if created:
            existing = EnvVersion(org=key.org, slug=slug, version=version, kind=kind, entry=entry, files=names)
            session.add(existing)
            session.flush()
        answer = env_json(existing) | {"created": created}
    return JSONResponse(answer, status_code=201 if created else 200)


def list_envs(request: Request) -> JSONResponse:
    key = _key(request)
    with _platform(request).sessions() as session:
        rows = session.scalars(
            select(EnvVersion).where(EnvVersion.org == key.org).order_by(EnvVersion.slug, EnvVersion.id)
        ).all()
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        count = latest.get(row.slug, {}).get("versions", 0) + 1
        latest[row.slug] = env_json(row) | {"versions": count}
    return JSONResponse(list(latest.values()))


def get_env(request: Request) -> JSONResponse:
    key = _key(request)
    slug = request.path_params["slug"]
    with _platform(request).sessions() as session:
        rows = session.scalars(
            select(EnvVersion).where(EnvVersion.org == key.org, EnvVersion.slug == slug).order_by(EnvVersion.id)
        ).all()
    if not rows:
        raise ApiError(404, f"no env {slug!r}: push it with 'rolloutgym push ENV_FILE'")
    return JSONResponse({"slug": slug, "versions": [env_json(row) for row in rows]})


def latest_version(session: Session, org: str, slug: str) -> EnvVersion:
    row = session.scalars(
        select(EnvVersion).where(EnvVersion.org == org, EnvVersion.slug == slug).order_by(EnvVersion.id.desc())
    ).first()
    if row is None:
        raise ApiError(404, f"no env {slug!r} pushed: push it first with 'rolloutgym push ENV_FILE|ENV_ID'")
    return row


RUN_OPTIONS = (
    "limit",
    "seed",
    "split",
    "tasks",
    "max_steps",
    "timeout",
    "concurrency",
    "pass_threshold",
    "policy_options",
)


def _check_policy(session: Session, org: str, policy: str) -> None:
    if not policy:
        raise ApiError(400, "give a model or policy, e.g. model='hf:tiny' or 'openai:gpt-4o-mini'")
    if policy.startswith("job:"):
        job = _own(session, Job, policy.removeprefix("job:"), org, "job")
        if job.state != "succeeded":
            raise ApiError(400, f"job {job.id} is {job.state}; its model is usable once it has succeeded")


async def create_run(request: Request) -> JSONResponse:
    return await run_in_threadpool(_create_run, request, await _body(request))


def _create_run(request: Request, body: dict[str, Any]) -> JSONResponse:
    key = _key(request, "run")
    slug = str(body.get("env_slug") or body.get("envSlug") or "")
    policy = str(body.get("model") or body.get("policy") or "")
    n = body.get("n", 1)
    if not isinstance(n, int) or n < 1:
        raise ApiError(400, f"n must be a whole number of at least 1, got {n!r}")
    options = {name: body[name] for name in RUN_OPTIONS if body.get(name) is not None}
    with _platform(request).sessions.begin() as session:
        version = latest_version(session, key.org, slug)
        _check_policy(session, key.org, policy)
        options["env_version"] = version.version
        run = RunRow(
            id=db.new_id("run"),
            org=key.org,
            env_slug=slug,
            env_version_id=version.id,
            policy=policy,
            n=n,
            options=options,
            state="queued",
            attempts=0,
            done=0,
            passes=0,
            trajectories=0,
            errors=0,
        )
        session.add(run)
        session.flush()
        answer = run_json(run)
    _platform(request).hub.work_queued()  # committed: an idle worker claims it now
    return JSONResponse(answer, status_code=201)


def list_runs(request: Request) -> JSONResponse:
    key = _key(request)
    limit = min(int(request.query_params.get("limit", "100")), 100_000)
    query = select(RunRow).where(RunRow.org == key.org)
    if request.query_params.get("env"):
        query = query.where(RunRow.env_slug == request.query_params["env"])
    with _platform(request).sessions() as session:
        rows = session.scalars(query.order_by(RunRow.created_at.desc(), RunRow.id).limit(limit)).all()
    return JSONResponse([run_json(row) for row in rows])


def get_run(request: Request) -> JSONResponse:
    return JSONResponse(_run_answer(_platform(request), _key(request).org, request.path_params["run_id"]))


def _run_file(request: Request) -> Path:
    key = _key(request)
    with _platform(request).sessions() as session:
        run = _own(session, RunRow, request.path_params["run_id"], key.org, "run")
    if not run.path or not (_platform(request).data / run.path).exists():
        raise ApiError(409, f"run {run.id} is {run.state} and has no run file yet")
    return _platform(request).data / run.path


def run_file(request: Request) -> FileResponse:
    path = _run_file(request)
    return FileResponse(path, media_type="application/x-ndjson", filename=path.name)


def rollout_scores(path: Path) -> dict[str, float]:
    """Every scored rollout of a run file by its id ``TASK:MEMBER`` (task index, position in its group)."""
    from ..runs import iter_run

    return {
        f"{task_index}:{member}": score.value
        for task_index, group in iter_run(path, allow_partial_tail=True)
        for member, score in enumerate(group.scores)
    }


def passing_rollouts(request: Request) -> JSONResponse:
    path = _run_file(request)
    try:
        threshold = float(request.query_params.get("threshold", "1.0"))
    except ValueError:
        raise ApiError(400, "threshold must be a number, e.g. 1.0") from None
    return JSONResponse([rollout for rollout, value in rollout_scores(path).items() if value >= threshold])


def _check_rollout_ids(platform: Platform, run: RunRow, rollout_ids: Any) -> list[str] | None:
    """The job's ``rollout_ids``: a list of ids of the run's rollouts (as ``passing_rollout_ids`` gives them)."""
    if rollout_ids is None:
        return None
    if not isinstance(rollout_ids, list) or not all(isinstance(item, str) for item in rollout_ids):
        raise ApiError(400, "rollout_ids must be a list of ids like '0:1' (from passing_rollout_ids)")
    known = rollout_scores(platform.data / run.path)
    unknown = [item for item in rollout_ids if item not in known]
    if unknown:
        raise ApiError(
            400, f"run {run.id} has no rollout {', '.join(unknown[:5])}; take the ids from passing_rollout_ids"
        )
    if not rollout_ids:
        raise ApiError(400, f"rollout_ids is empty: run {run.id} gave no rollouts to train on")
    return rollout_ids


async def create_job(request: Request) -> JSONResponse:
    return await run_in_threadpool(_create_job, request, await _body(request))


def _create_job(request: Request, body: dict[str, Any]) -> JSONResponse:
    key = _key(request, "train")
    method = str(body.get("method") or "sft")
    if method not in METHODS:
        raise ApiError(400, f"unknown method {method!r}; choose sft, dpo or grpo")
    base_model = str(body.get("base_model") or body.get("baseModel") or "")
    if not base_model:
        raise ApiError(400, "give base_model, e.g. hf:tiny or hf:PATH")
    with _platform(request).sessions.begin() as session:
        run = _own(session, RunRow, str(body.get("source_run_id") or body.get("sourceRunId") or ""), key.org, "run")
        if run.state != "succeeded":
            raise ApiError(400, f"run {run.id} is {run.state}; train on it once it has succeeded")
        job = Job(
            id=db.new_id("job"),
            org=key.org,
            source_run_id=run.id,
            method=method,
            base_model=base_model,
            suffix=body.get("suffix"),
            rollout_ids=_check_rollout_ids(_platform(request), run, body.get("rollout_ids", body.get("rolloutIds"))),
            options=dict(body.get("options") or {}),
            state="queued",
            attempts=0,
        )
        session.add(job)
        session.flush()
        answer = job_json(job)
    _platform(request).hub.work_queued()
    return JSONResponse(answer, status_code=201)


def list_jobs(request: Request) -> JSONResponse:
    key = _key(request)
    with _platform(request).sessions() as session:
        rows = session.scalars(select(Job).where(Job.org == key.org).order_by(Job.created_at.desc())).all()
    return JSONResponse([job_json(row) for row in rows])


def _log_records(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    records: list[dict[str, Any]] = []
    lines: list[str] = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            lines.append(line)
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "step" in record:
                records.append(record)
    return records, lines[-20:]


def _job_answer(platform: Platform, org: str, job_id: str) -> dict[str, Any]:
    with platform.sessions() as session:
        job = _own(session, Job, job_id, org, "job")
    records, tail = _log_records(platform.data / job.log_path) if job.log_path else ([], [])
    curve = [{"step": r["step"], "loss": r.get("loss")} for r in records if isinstance(r.get("loss"), (int, float))]
    return job_json(job) | {"logTail": tail, "curve": curve}


def get_job(request: Request) -> JSONResponse:
    return JSONResponse(_job_answer(_platform(request), _key(request).org, request.path_params["job_id"]))


def _run_answer(platform: Platform, org: str, run_id: str) -> dict[str, Any]:
    """The run's JSON, read with one Core query (the most frequent read: every answer to a waiting client)."""
    with platform.sessions.kw["bind"].connect() as connection:
        run = connection.execute(select(RunRow.__table__).where(RunRow.id == run_id)).first()
    if run is None or run.org != org:
        raise ApiError(404, f"no run {run_id!r} (list them with 'rolloutgym runs --remote')")
    return run_json(run)


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


async def _wait(request: Request, topic: str, read: Callable[[Platform, str, str], dict[str, Any]]) -> JSONResponse:
    """Answer the row once its ``state`` (or ``done``) differs from what the client saw (by default: from the
    first read), once it has ended (succeeded or failed), or at the timeout; with ``until=ended`` only once it
    has ended, or at the timeout.

    The handler awaits the hub's event for the row (a worker's ``changed`` message) and re-reads
    the database when it fires, and at least every ``poll`` seconds without one; it holds no
    thread while it waits, so any number of clients can wait at once. A client waiting for the
    end is not even read for while the worker's messages say the row is still running.
    """
    wait = _wait_params(request)
    platform = _platform(request)
    key = await _wait_key(request)
    row_id = request.path_params["row_id"]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait.timeout
    state, done, look = wait.state, wait.done, True
    with platform.hub.watch(f"{topic} {row_id}") as changed:
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


async def wait_run(request: Request) -> JSONResponse:
    return await _wait(request, "run", _run_answer)


async def wait_job(request: Request) -> JSONResponse:
    return await _wait(request, "job", _job_answer)


def count_rows(request: Request) -> JSONResponse:
    key = _key(request)
    with _platform(request).sessions() as session:
        runs = session.scalar(select(func.count()).select_from(RunRow).where(RunRow.org == key.org))
    return JSONResponse({"runs": runs})


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse({"error": exc.message}, status_code=exc.status)


def create_app(data: str | Path, database: str | None = None, *, poll: float = 1.0) -> Starlette:
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
    platform = Platform(Path(data).resolve(), db.open_database(data, database), Hub(data), poll)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        platform.hub.start()
        try:
            yield
        finally:
            platform.hub.close()

    app = Starlette(routes=routes, exception_handlers={ApiError: _api_error}, lifespan=lifespan)
    app.state.platform = platform
    return app
