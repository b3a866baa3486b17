"""The API's training jobs: queue one on a run's rollouts (waking the idle workers), list them, read one (with
its log tail and training curve)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import select
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from . import api_input, db, trust
from .api_common import ApiError, Platform, _key, _own, _platform, job_json
from .api_input import read_json
from .api_runs import rollout_scores
from .models import ApiKey, Job, RunRow
from .pg_notify import notify_work

METHODS = ("sft", "dpo", "grpo")


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
    """``POST /api/jobs``: the key is checked before the body is read, and the body is read with a cap."""
    key, body = await read_json(request, "train")
    return await run_in_threadpool(_create_job, request, key, body)


def _create_job(request: Request, key: ApiKey, body: dict[str, Any]) -> JSONResponse:
    method = body.get("method") or "sft"
    if method not in METHODS:
        raise ApiError(400, f"unknown method {str(method)[:40]!r}; choose sft, dpo or grpo")
    base_model = trust.check_base_model(body.get("base_model") or body.get("baseModel"))
    options = trust.check_job_options(body.get("options"))
    suffix = body.get("suffix")
    if suffix is not None and (not isinstance(suffix, str) or len(suffix) > 100 or not suffix.isprintable()):
        raise ApiError(400, "suffix must be at most 100 printable characters")
    source_run_id = api_input.row_id(body.get("source_run_id") or body.get("sourceRunId"), "run")
    with _platform(request).sessions.begin() as session:
        run = _own(session, RunRow, source_run_id, key.org, "run")
        if run.state != "succeeded":
            raise ApiError(400, f"run {run.id} is {run.state}; train on it once it has succeeded")
        job = Job(
            id=db.new_id("job"),
            org=key.org,
            source_run_id=run.id,
            method=method,
            base_model=base_model,
            suffix=suffix,
            rollout_ids=_check_rollout_ids(_platform(request), run, body.get("rollout_ids", body.get("rolloutIds"))),
            options=options,
            state="queued",
            attempts=0,
        )
        session.add(job)
        session.flush()
        notify_work(session)  # workers on any host LISTEN (PostgreSQL); sent at the commit
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
    key = _key(request)
    job_id = api_input.row_id(request.path_params["job_id"], "job")
    return JSONResponse(_job_answer(_platform(request), key.org, job_id))
