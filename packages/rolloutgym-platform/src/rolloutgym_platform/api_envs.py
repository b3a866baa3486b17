"""The API's envs: push a version (files stored and hashed here, never imported), list them, show one."""

from __future__ import annotations

import base64
from typing import Any

from rolloutgym.platform.envfiles import content_version, env_slug
from rolloutgym.platform.errors import PlatformError
from rolloutgym_protocol.errors import RolloutGymError
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

from . import api_input
from .api_common import ApiError, Platform, _key, _platform, env_json
from .api_input import read_json
from .models import ApiKey, EnvVersion


def _file_name(name: Any) -> str:
    """A pushed file's name: a base name (no folder, no leading dot), printable, at most 200 characters."""
    if (
        not isinstance(name, str)
        or not 0 < len(name) <= 200
        or not name.isprintable()
        or "/" in name
        or "\\" in name
        or name.startswith(".")
    ):
        shown = repr(name)[:60] if isinstance(name, str) else type(name).__name__
        raise ApiError(400, f"file name {shown} is not allowed; push files by their base names (printable, no '/')")
    return name


def _store_files(platform: Platform, org: str, slug: str, main: str, files: dict[str, bytes]) -> tuple[str, str]:
    version = content_version(files)
    folder = platform.data / "envs" / org / slug.replace("/", "__") / version
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return version, str((folder / main).relative_to(platform.data))


def _decode_files(body: dict[str, Any]) -> dict[str, bytes]:
    files = body.get("files") or {}
    if not isinstance(files, dict) or len(files) > 1000:
        raise ApiError(400, "files must be a JSON object of at most 1,000 base names and their base64 contents")
    try:
        return {_file_name(name): base64.b64decode(text, validate=True) for name, text in files.items()}
    except (ValueError, TypeError):
        raise ApiError(400, "the pushed files are not base64") from None


def _decode_push(platform: Platform, org: str, body: dict[str, Any]) -> tuple[str, str, str, str, list[str]]:
    """(slug, version, kind, entry, file names) of a push body."""
    if body.get("kind") == "id":
        env_id = api_input.slug(body.get("id"), "env id")
        from importlib.metadata import version as installed

        from rolloutgym import get_registry

        try:  # a registered id, never a path: the worker resolves it in its registry only
            get_registry().resolve_env(env_id)
        except RolloutGymError as exc:
            raise ApiError(400, str(exc).splitlines()[0]) from None
        slug = api_input.slug(body.get("slug") or env_id)
        return slug, content_version({env_id: installed("rolloutgym").encode()}), "id", env_id, []
    main = body.get("main") or ""
    files = _decode_files(body)
    if not isinstance(main, str) or main not in files:
        raise ApiError(400, "the push names no env file")
    try:
        slug = api_input.slug(body.get("slug") or env_slug(main, files[main]))
    except PlatformError as exc:
        raise ApiError(400, str(exc)) from None
    except (RecursionError, ValueError, MemoryError):
        raise ApiError(400, f"{main[:60]!r}: the env file cannot be read (nested too deeply, or not text)") from None
    version, entry = _store_files(platform, org, slug, main, files)
    return slug, version, "python" if main.endswith(".py") else "json", entry, sorted(files)


async def push_env(request: Request) -> JSONResponse:
    """``POST /api/envs``: the key is checked before the body is read, and the body is read with a cap."""
    key, body = await read_json(request, "push", _platform(request).max_push)
    return await run_in_threadpool(_push_env, request, key, body)


def _push_env(request: Request, key: ApiKey, body: dict[str, Any]) -> JSONResponse:
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
    slug = api_input.slug(request.path_params["slug"])
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
