"""What the API's endpoints share: the platform's state, the request's key (and the cache of keys found
lately), the organisation check of a row, and the JSON shapes of envs, runs and jobs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from starlette.requests import Request

from . import db
from .models import ApiKey, EnvVersion, Job, RunRow
from .notify import Hub


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
    max_push: int = 32 << 20  # the largest push body, in bytes (platform serve --max-push-mb)


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
        "options": {k: v for k, v in (run.options or {}).items() if k not in ("env_version", "may_run_code")},
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
