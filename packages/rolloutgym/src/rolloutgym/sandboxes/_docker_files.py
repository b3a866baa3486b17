"""Reading files out of a container (``GET /containers/{id}/archive``): regular files only, never through a link.

The archive endpoint of some engines follows a symlink (podman's does), so every component of the
path is first looked at with ``HEAD`` (its ``X-Docker-Container-Path-Stat`` header gives the mode of
the entry itself): a link anywhere on the path leaves the file out. Race-free only when nothing
runs in the sandbox (the Harbor verifier reads its reward after every process there is gone).
"""

from __future__ import annotations

import base64
import io
import json
import posixpath
import tarfile
from collections.abc import Sequence
from typing import Any

from ._engine import EngineClient, EngineError

__all__ = ["read_archive_files"]

_SYMLINK = 1 << 27  # Go's os.ModeSymlink, in the stat header's "mode"
_DIR = 1 << 31


def _stat(engine: EngineClient, container: str, path: str) -> dict[str, Any] | None:
    try:
        headers = engine.request("HEAD", f"/containers/{container}/archive", params={"path": path}, headers_only=True)
    except EngineError:
        return None
    encoded = headers.get("x-docker-container-path-stat")
    if not encoded:
        return None
    try:
        stat = json.loads(base64.b64decode(encoded))
    except ValueError:
        return None
    return stat if isinstance(stat, dict) else None


def _plain_path(engine: EngineClient, container: str, path: str) -> bool:
    """Whether ``path`` names a regular file reached through folders only (no link on the way)."""
    parts = [part for part in path.split("/") if part]
    if not path.startswith("/") or not parts or ".." in parts:
        return False
    for depth in range(1, len(parts) + 1):
        stat = _stat(engine, container, "/" + "/".join(parts[:depth]))
        if stat is None:
            return False
        mode = int(stat.get("mode", 0))
        if mode & _SYMLINK:
            return False
        if depth < len(parts) and not (mode & _DIR or stat.get("isDir")):
            return False
    return not (mode & _DIR or stat.get("isDir"))


def read_archive_files(
    engine: EngineClient, container: str, paths: Sequence[str], *, max_bytes: int
) -> dict[str, bytes]:
    """``{path: bytes}`` for each path that is a regular file of at most ``max_bytes`` (others left out)."""
    found: dict[str, bytes] = {}
    for path in paths:
        path = posixpath.normpath(path)
        if not _plain_path(engine, container, path):
            continue
        try:
            raw = engine.request("GET", f"/containers/{container}/archive", params={"path": path})
        except EngineError:
            continue
        if not isinstance(raw, bytes):
            continue
        try:
            archive = tarfile.open(fileobj=io.BytesIO(raw))
            member = archive.next()
        except tarfile.TarError:
            continue
        if member is None or not member.isreg() or member.size > max_bytes:
            continue
        handle = archive.extractfile(member)
        if handle is not None:
            found[path] = handle.read(max_bytes + 1)[:max_bytes]
    return found
