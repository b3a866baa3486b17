"""The API's envs: push a version (files stored and hashed here, never imported), list them, show one."""

from __future__ import annotations

import base64
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from .api_common import ApiError, Platform, _body, _key, _platform, env_json
from .envfiles import SLUG, content_version, env_slug
from .errors import PlatformError
from .models import EnvVersion


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
