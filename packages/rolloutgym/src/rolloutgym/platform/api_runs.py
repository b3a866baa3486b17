"""The API's runs: queue one (waking the idle workers), list them, read one, its run file, its passing rollouts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse

from . import db
from .api_common import ApiError, Platform, _body, _key, _own, _platform, run_json
from .api_envs import latest_version
from .models import Job, RunRow
from .pg_notify import WORK_CHANNEL, is_postgres

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


def _check_policy(session: Session, org: str, policy: str) -> str:
    """The policy as the workers build it (the rollout SDK's ``openai/gpt-4o-mini`` is ``openai:gpt-4o-mini``); 400
    for a provider that is not installed, or one without its model, when the run is submitted (not on a worker)."""
    if not policy:
        raise ApiError(400, "give a model or policy, e.g. model='hf:tiny' or 'openai:gpt-4o-mini'")
    if policy.startswith("job:"):
        job = _own(session, Job, policy.removeprefix("job:"), org, "job")
        if job.state != "succeeded":
            raise ApiError(400, f"job {job.id} is {job.state}; its model is usable once it has succeeded")
    if policy.startswith(("job:", "replay:")):
        return policy
    from rolloutgym_protocol.errors import ConfigError, PolicyNotFound

    from ..registry import get_registry

    try:
        return get_registry().policy_reference(policy)
    except (PolicyNotFound, ConfigError) as exc:
        raise ApiError(400, str(exc)) from None


async def queue_run(request: Request, run_id: str | None = None) -> dict[str, Any]:
    """Queue the run the request's body describes (as ``run_id`` when given); the queued run's JSON."""
    return await run_in_threadpool(_create_run, request, await _body(request), run_id)


def _create_run(request: Request, body: dict[str, Any], run_id: str | None = None) -> dict[str, Any]:
    key = _key(request, "run")
    slug = str(body.get("env_slug") or body.get("envSlug") or "")
    policy = str(body.get("model") or body.get("policy") or "")
    n = body.get("n", 1)
    if not isinstance(n, int) or n < 1:
        raise ApiError(400, f"n must be a whole number of at least 1, got {n!r}")
    options = {name: body[name] for name in RUN_OPTIONS if body.get(name) is not None}
    # Each statement on its own (nothing to roll back: the checks only read); on PostgreSQL the insert and the
    # workers' NOTIFY are one statement, so queuing a run is two round trips to the server.
    with Session(db.autocommit(_platform(request).sessions.kw["bind"])) as session:
        version = latest_version(session, key.org, slug)
        policy = _check_policy(session, key.org, policy)
        options["env_version"] = version.version
        values = {"id": run_id or db.new_id("run"), "org": key.org, "env_slug": slug, "env_version_id": version.id}
        run = _insert_run(session, values | {"policy": policy, "n": n, "options": options})
        answer = run_json(run)
    _platform(request).hub.work_queued()  # committed: an idle worker claims it now
    return answer


def _insert_run(session: Session, values: dict[str, Any]) -> Any:
    """Insert the queued run; the row as inserted. On PostgreSQL the same statement sends ``NOTIFY`` to the
    listening workers (``WITH inserted AS (INSERT ... RETURNING *) SELECT inserted.*, pg_notify(...)``): it is
    delivered when the row is committed, and workers on any host claim it at once."""
    table = RunRow.__table__
    statement: Any = insert(table).values(state="queued", attempts=0, **values).returning(*table.columns)
    if is_postgres(session.get_bind()):
        inserted = statement.cte("inserted")
        statement = select(*inserted.c, func.pg_notify(WORK_CHANNEL, ""))
    return session.execute(statement).first()


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
    """A finished run's passing rollouts; a queued or running one is refused (409), on every database: its list
    would be partial (``Client.passing_rollout_ids`` waits for the end first)."""
    with _platform(request).sessions() as session:
        run = _own(session, RunRow, request.path_params["run_id"], _key(request).org, "run")
    if run.state in ("queued", "running"):
        raise ApiError(
            409,
            f"run {run.id} has not finished ({run.state}, {run.done or 0}/{run.total or '?'} tasks): its passing "
            "rollouts are known once it ends; wait for it (Client.wait_run), or call Client.passing_rollout_ids, "
            "which waits",
        )
    path = _run_file(request)
    try:
        threshold = float(request.query_params.get("threshold", "1.0"))
    except ValueError:
        raise ApiError(400, "threshold must be a number, e.g. 1.0") from None
    return JSONResponse([rollout for rollout, value in rollout_scores(path).items() if value >= threshold])


def _run_answer(platform: Platform, org: str, run_id: str) -> dict[str, Any]:
    """The run's JSON, read with one Core query on its own (the most frequent read: every answer to a waiting
    client; on PostgreSQL one round trip, no ``BEGIN``/``ROLLBACK``)."""
    with db.autocommit(platform.sessions.kw["bind"]).connect() as connection:
        run = connection.execute(select(RunRow.__table__).where(RunRow.id == run_id)).first()
    if run is None or run.org != org:
        raise ApiError(404, f"no run {run_id!r} (list them with 'rolloutgym runs --remote')")
    return run_json(run)


def count_rows(request: Request) -> JSONResponse:
    key = _key(request)
    with _platform(request).sessions() as session:
        runs = session.scalar(select(func.count()).select_from(RunRow).where(RunRow.org == key.org))
    return JSONResponse({"runs": runs})
