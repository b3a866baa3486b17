"""A worker executing a claimed run.

A run executes as ``rolloutgym run`` would, into the run file ``DATA/runs/ORG/RUN_ID.jsonl``,
always with ``resume``: a run whose worker died (its lease expired) is claimed again and
continues that file, so finished groups are neither lost nor run twice. A run whose policy or
env runs code a push key chose (a pushed Python env file, an MCP server, ``harness:``) executes
in the sandbox as an unprivileged user (:mod:`.worker_sandbox`); the others in this process.
Pushed files are never imported by the API process. The claim is the
only write before a run's rollouts start (it records the lease and the run file's path), and
the end is one write.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import func, literal
from sqlalchemy.orm import Session, sessionmaker

from . import db, trust
from .models import EnvVersion, Job, RunRow
from .notify import Listener
from .worker_lease import Heartbeat, LeaseLost, describe
from .worker_sandbox import execute_sandboxed, runs_code


def _policy(sessions: sessionmaker[Session], data: Path, policy: str, org: str) -> str:
    """``job:ID`` is the model that job trained (``hf:PATH``), ``replay:RUN_ID`` that run's file
    (``replay:PATH``), each only when the run's organisation owns it; other policies as given."""
    kind, _, row_id = policy.partition(":")
    if kind not in ("job", "replay"):
        return policy
    with sessions() as session:
        row = session.get(Job if kind == "job" else RunRow, row_id)
    path = None if row is None or row.org != org else row.model_path if kind == "job" else row.path
    if not path:
        raise LookupError(f"policy {policy}: no {'trained model' if kind == 'job' else 'run file'} of yours")
    return f"{'hf' if kind == 'job' else 'replay'}:{data / path}"


_ENV_VERSIONS: dict[tuple[str, int], EnvVersion] = {}


def _env_version(sessions: sessionmaker[Session], version_id: int) -> EnvVersion:
    """The pushed env version (a version never changes: it is read once per worker and database)."""
    key = (str(sessions.kw["bind"].url), version_id)
    if key not in _ENV_VERSIONS:
        with sessions() as session:
            _ENV_VERSIONS[key] = session.get(EnvVersion, version_id)
    return _ENV_VERSIONS[key]


def _run_options(
    sessions: sessionmaker[Session], data: Path, run: RunRow, out: Path, ray: str | None = None
) -> tuple[dict[str, Any], bool]:
    """The run's :class:`~rolloutgym.RunConfig` keywords, and whether it runs code a push key chose (then it
    executes in the sandbox, :mod:`.worker_sandbox`); its rollouts on the Ray cluster ``ray`` when given."""
    version = _env_version(sessions, run.env_version_id)
    options = {k: v for k, v in (run.options or {}).items() if k not in ("env_version", trust.MAY_RUN_CODE)}
    sandboxed = _check_trust(data, run, version)
    if options.get("tasks"):
        options["tasks"] = [str(task) for task in options["tasks"]]
    config = {
        "env": version.entry if version.kind == "id" else str(data / version.entry),
        "policy": _policy(sessions, data, run.policy, run.org),
        "num_rollouts": run.n,
        "out": out,
        "resume": True,
        **({"executor": "ray", "executor_options": {"address": ray}} if ray else {}),
        **options,
    }
    return config, sandboxed


def _run_config(sessions: sessionmaker[Session], data: Path, run: RunRow, out: Path, ray: str | None = None) -> Any:
    """The run's :class:`~rolloutgym.RunConfig` (as it executes in the worker)."""
    from rolloutgym import RunConfig

    return RunConfig(**_run_options(sessions, data, run, out, ray)[0])


def _check_trust(data: Path, run: RunRow, version: EnvVersion) -> bool:
    """Execute only what the key that queued the run could choose (:mod:`.trust`): a run queued without the push
    scope runs no code, and a registered id is never read as a path. True when the run executes code a push key
    chose: then it runs in the sandbox, never in this process."""
    from rolloutgym.sources import is_env_file

    if version.kind == "id" and is_env_file(version.entry):
        raise PermissionError(f"env {version.entry!r} is not a registered env id")
    folder = (data / version.entry).parent if version.kind != "id" else data
    if not (run.options or {}).get(trust.MAY_RUN_CODE):
        policy_options = (run.options or {}).get("policy_options")
        trust.check_run(run.policy, policy_options, folder, version.kind, version.entry, list(version.files or []))
        return False
    return runs_code(folder, run, version) is not None


def attempt_path(org: str, run_id: str, attempt: int) -> Path:
    """An attempt's run file, relative to DATA: ``runs/ORG/RUN_ID.jsonl``, then ``RUN_ID.attempt-N.jsonl``.

    Each claim of a run writes its own file, seeded with the finished groups of the file the
    previous attempt recorded; the database points at the file of the attempt that finishes.
    A worker that lost its lease but still runs (stalled, not dead) therefore only ever
    appends to its own, abandoned file: it cannot write a group twice into the recorded one.
    """
    name = f"{run_id}.jsonl" if attempt <= 1 else f"{run_id}.attempt-{attempt}.jsonl"
    return Path("runs") / org / name


def claim_values(model: Any) -> dict[str, Any]:
    """What a run's claim writes besides the lease, as SQL of the row: on a first attempt (no run file yet) the
    path of the run file it writes (:func:`attempt_path` of attempt 1). A later attempt keeps the path until its
    file holds the earlier attempt's groups (:func:`execute_run`), so a worker dying in between loses nothing."""
    first = literal("runs/") + model.org + "/" + model.id + ".jsonl"
    return {"path": func.coalesce(model.path, first)}


def seed_from_previous(data: Path, previous: str | None, target: Path) -> None:
    """Copy the complete lines of the previous attempt's run file (a line cut off mid-write is left out)."""
    if not previous or not (data / previous).is_file() or (data / previous) == target:
        return
    content = (data / previous).read_bytes()
    target.write_bytes(content[: content.rfind(b"\n") + 1])


def _progress_hooks(heart: Heartbeat, run_id: str, pass_threshold: float) -> tuple[Any, Any]:
    """The runner's ``on_start``/``on_group``: the progress counters the heartbeat writes; a lost lease stops it."""
    counts = {"done": 0, "passes": 0, "trajectories": 0, "errors": 0}

    def on_start(header: dict[str, Any], remaining: int) -> None:
        counts["done"] = len(header.get("tasks") or []) - remaining if header.get("tasks") else 0
        heart.values = dict(heart.values, total=counts["done"] + remaining, done=counts["done"])

    def on_group(task_index: int, group: Any) -> None:
        if heart.lost:
            raise LeaseLost(run_id)
        counts["done"] += 1
        counts["passes"] += sum(score.value >= pass_threshold for score in group.scores)
        counts["trajectories"] += len(group.scores)
        counts["errors"] += len(group.errors)
        heart.values = dict(heart.values, **counts)

    return on_start, on_group


def _execute_here(config: Any, heart: Heartbeat, run_id: str) -> dict[str, Any]:
    """Run ``config`` in this process (it runs no code a push key chose); the row's final counters."""
    from rolloutgym import arun

    on_start, on_group = _progress_hooks(heart, run_id, config.pass_threshold)
    result = asyncio.run(arun(config, on_start=on_start, on_group=on_group))
    summary = result.summary
    return {
        "total": len(result.task_indices),  # not result.groups: that reads the whole run file back
        "done": len(result.task_indices),
        "passes": round(summary.pass_rate * summary.num_trajectories),
        "trajectories": summary.num_trajectories,
        "errors": summary.num_errors,
        "pass_rate": summary.pass_rate,
    }


def execute_run(
    sessions: sessionmaker[Session],
    data: Path,
    run: RunRow,
    owner: str,
    lease: float,
    ray: str | None = None,
    listener: Listener | None = None,
    *,
    previous: str | None = None,
) -> None:
    """Execute a claimed run into this attempt's run file, seeded from ``previous`` (the run file of the
    attempt before, if any); the file's path is recorded once it is seeded (a first attempt's claim did)."""
    from rolloutgym import RunConfig

    relative = attempt_path(run.org, run.id, run.attempts)
    out = data / relative
    out.parent.mkdir(parents=True, exist_ok=True)
    seed_from_previous(data, previous, out)
    with Heartbeat(sessions, RunRow, run.id, owner, lease, listener) as heart:
        heart.values = {"path": str(relative)}
        if run.path != str(relative):
            heart.beat()
            if heart.lost:
                return
        try:
            options, sandboxed = _run_options(sessions, data, run, out, ray)
            if sandboxed:  # code a push key chose: as an unprivileged user in the sandbox, never here
                counts = execute_sandboxed(options, data, run.id, out, heart)
            else:
                counts = _execute_here(RunConfig(**options), heart, run.id)
        except Exception as exc:  # the run failed: record why, in one line (unless another worker holds it now)
            if not heart.lost:
                db.finish(sessions, RunRow, run.id, owner, "failed", error=describe(exc), **heart.values)
            return
    finished = db.finish(sessions, RunRow, run.id, owner, "succeeded", path=str(relative), **counts)
    if finished and relative.name != f"{run.id}.jsonl":
        for stale in out.parent.glob(f"{run.id}.*jsonl"):  # earlier attempts' files: superseded
            if stale != out:
                stale.unlink(missing_ok=True)
