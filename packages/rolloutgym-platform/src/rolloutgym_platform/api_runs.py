"""The API's runs: queue one (waking the idle workers), list them, read one, its run file, its passing rollouts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse

from . import api_input, db, trust
from .api_common import ApiError, Platform, _key, _own, _platform, run_json
from .api_envs import latest_version
from .api_input import read_json
from .models import Job, RunRow
from .pg_notify import WORK_CHANNEL, is_postgres


def _provider_form(policy: Any) -> Any:
    """The rollout SDK's ``provider/model`` as ``provider:model`` (``Registry.policy_reference``), before the shape
    check; a ``name/...`` reference whose name is no installed provider is refused naming the accepted forms."""
    if not isinstance(policy, str) or len(policy) > 1000 or "/" not in policy.partition(":")[0]:
        return policy
    from rolloutgym import get_registry
    from rolloutgym_protocol.errors import ConfigError, PolicyNotFound

    try:
        return get_registry().policy_reference(policy)
    except (PolicyNotFound, ConfigError) as exc:
        raise ApiError(400, str(exc)) from None


def _check_policy(session: Session, org: str, policy: str) -> str:
    """The policy as the workers build it (the rollout SDK's ``openai/gpt-4o-mini`` is ``openai:gpt-4o-mini``); 400
    for a provider that is not installed, or one without its model, when the run is submitted (not on a worker)."""
    if not policy:
        raise ApiError(400, "give a model or policy, e.g. model='hf:tiny' or 'openai:gpt-4o-mini'")
    if policy.startswith("job:"):
        job = _own(session, Job, policy.removeprefix("job:"), org, "job")
        if job.state != "succeeded":
            raise ApiError(400, f"job {job.id} is {job.state}; its model is usable once it has succeeded")
    if policy.startswith("replay:"):  # a run of this organisation, by id: its run file is the worker's to find
        run = _own(session, RunRow, policy.removeprefix("replay:"), org, "run")
        if not run.path:
            raise ApiError(400, f"run {run.id} is {run.state} and has no run file to replay yet")
    if policy.startswith(("job:", "replay:")):
        return policy
    from rolloutgym import get_registry
    from rolloutgym_protocol.errors import ConfigError, PolicyNotFound

    try:
        return get_registry().policy_reference(policy)
    except (PolicyNotFound, ConfigError) as exc:
        raise ApiError(400, str(exc)) from None


def _check_trust(platform: Platform, key: Any, policy: str, options: dict[str, Any], version: Any) -> None:
    """403 naming the scope when the policy or the env version runs code and the key lacks ``push``; records
    whether the key could (the worker checks again: :func:`.trust.check_run`)."""
    reason = trust.policy_runs_code(policy, options.get("policy_options"))
    may_run_code = trust.CODE_SCOPE in key.scopes.split(",")
    if reason is None and not may_run_code:
        reason = _env_reason(platform, version)
    if reason is not None and not may_run_code:
        raise ApiError(403, str(trust.needs_scope(reason)))
    options[trust.MAY_RUN_CODE] = may_run_code


_ENV_REASONS: dict[tuple[str, int], str | None] = {}


def _env_reason(platform: Platform, version: Any) -> str | None:
    """What in the env version runs code (None: nothing); a version never changes, so it is read once."""
    cache_key = (str(platform.data), version.id)
    if cache_key not in _ENV_REASONS:
        folder = (platform.data / version.entry).parent if version.kind != "id" else platform.data
        if len(_ENV_REASONS) > 10_000:
            _ENV_REASONS.clear()
        _ENV_REASONS[cache_key] = trust.env_runs_code(folder, version.kind, version.entry, list(version.files or []))
    return _ENV_REASONS[cache_key]


async def queue_run(request: Request, run_id: str | None = None) -> dict[str, Any]:
    """Queue the run the request's body describes (as ``run_id`` when given); the queued run's JSON.

    The key is checked before the body is read (:func:`.api_input.read_json`)."""
    _, body = await read_json(request, "run")
    return await run_in_threadpool(_create_run, request, body, run_id)


def _create_run(request: Request, body: dict[str, Any], run_id: str | None = None) -> dict[str, Any]:
    key = _key(request, "run")
    slug = api_input.slug(body.get("env_slug") or body.get("envSlug"))
    policy = _provider_form(body.get("model") or body.get("policy") or "")
    if policy:
        trust.policy_reference(policy)  # shape: 400 for a path, a control character, 5,000 characters
    n = api_input.whole(body.get("n", 1), "n", 1, api_input.MAX_N)
    options = api_input.run_options(body)
    # Each statement on its own (nothing to roll back: the checks only read); on PostgreSQL the insert and the
    # workers' NOTIFY are one statement, so queuing a run is two round trips to the server.
    with Session(db.autocommit(_platform(request).sessions.kw["bind"])) as session:
        version = latest_version(session, key.org, slug)
        policy = _check_policy(session, key.org, policy)
        _check_trust(_platform(request), key, policy, options, version)
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
    limit = api_input.query_whole(request, "limit", 100, 1, api_input.MAX_LIMIT)
    query = select(RunRow).where(RunRow.org == key.org)
    if request.query_params.get("env"):
        query = query.where(RunRow.env_slug == api_input.slug(request.query_params["env"]))
    with _platform(request).sessions() as session:
        rows = session.scalars(query.order_by(RunRow.created_at.desc(), RunRow.id).limit(limit)).all()
    return JSONResponse([run_json(row) for row in rows])


def get_run(request: Request) -> JSONResponse:
    key = _key(request)
    run_id = api_input.row_id(request.path_params["run_id"], "run")
    return JSONResponse(_run_answer(_platform(request), key.org, run_id))


def _run_file(request: Request) -> Path:
    key = _key(request)
    with _platform(request).sessions() as session:
        run = _own(session, RunRow, api_input.row_id(request.path_params["run_id"], "run"), key.org, "run")
    if not run.path or not (_platform(request).data / run.path).exists():
        raise ApiError(409, f"run {run.id} is {run.state} and has no run file yet")
    return _platform(request).data / run.path


def run_file(request: Request) -> FileResponse:
    path = _run_file(request)
    return FileResponse(path, media_type="application/x-ndjson", filename=path.name)


def rollout_scores(path: Path) -> dict[str, float]:
    """Every scored rollout of a run file by its id ``TASK:MEMBER`` (task index, position in its group)."""
    from rolloutgym.runs import iter_run

    return {
        f"{task_index}:{member}": score.value
        for task_index, group in iter_run(path, allow_partial_tail=True)
        for member, score in enumerate(group.scores)
    }


def passing_rollouts(request: Request) -> JSONResponse:
    """A finished run's passing rollouts; a queued or running one is refused (409), on every database: its list
    would be partial (``Client.passing_rollout_ids`` waits for the end first)."""
    with _platform(request).sessions() as session:
        run = _own(session, RunRow, api_input.row_id(request.path_params["run_id"], "run"), _key(request).org, "run")
    if run.state in ("queued", "running"):
        raise ApiError(
            409,
            f"run {run.id} has not finished ({run.state}, {run.done or 0}/{run.total or '?'} tasks): its passing "
            "rollouts are known once it ends; wait for it (Client.wait_run), or call Client.passing_rollout_ids, "
            "which waits",
        )
    path = _run_file(request)
    threshold = api_input.finite(request.query_params.get("threshold", "1.0"), "threshold", -1e12, 1e12, query=True)
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
