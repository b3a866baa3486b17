"""What ``push`` uploads: an env file and its data files, their content hash, the env's slug.

Nothing here imports a pushed Python file: its slug is read from the source text (the
``slug="..."`` keyword of its ``Environment(...)`` call), so the API process never runs
user code. Only worker processes import env files.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from .errors import PlatformError

# Public: the platform's API reads pushes with the same rules (the rolloutgym-platform distribution).
__all__ = ["ENV_FILE_SUFFIXES", "SLUG", "collect", "content_version", "env_slug", "push_payload"]

ENV_FILE_SUFFIXES = (".py", ".json", ".jsonl")
SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./-]{0,199}$")


def content_version(files: dict[str, bytes]) -> str:
    """The version of an env: sha256 over its files' names and contents, first 16 hex digits."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return digest.hexdigest()[:16]


def python_slug(source: bytes, filename: str) -> str | None:
    """The ``slug="..."`` keyword of the file's first call that has one (read, never run)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise PlatformError(f"{filename}:{exc.lineno}: the env file does not parse: {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "slug" and isinstance(keyword.value, ast.Constant):
                    if isinstance(keyword.value.value, str):
                        return keyword.value.value
    return None


def json_slug(source: bytes, filename: str) -> str | None:
    text = source.decode("utf-8", errors="replace")
    first = text.splitlines()[0] if filename.endswith(".jsonl") and text.strip() else text
    try:
        data = json.loads(first)
    except json.JSONDecodeError as exc:
        raise PlatformError(f"{filename}:{exc.lineno}: the env file is not valid JSON: {exc.msg}") from None
    slug = data.get("slug") if isinstance(data, dict) else None
    return slug if isinstance(slug, str) else None


def env_slug(main: str, content: bytes) -> str:
    """The slug an env file declares, else its file name without the suffix."""
    found = python_slug(content, main) if main.endswith(".py") else json_slug(content, main)
    slug = found or Path(main).stem
    if not SLUG.match(slug):
        raise PlatformError(f"{main}: the slug {slug!r} is not usable; use letters, digits and - _ . /")
    return slug


def collect(path: Path, extra: list[Path] | None = None) -> dict[str, bytes]:
    """The env file and its data files: siblings whose name the file mentions, plus ``extra``."""
    text = path.read_text(encoding="utf-8", errors="replace")
    files = {path.name: path.read_bytes()}
    for sibling in sorted(path.parent.iterdir()):
        if sibling.is_file() and sibling != path and sibling.name in text and not sibling.name.endswith(".pyc"):
            files[sibling.name] = sibling.read_bytes()
    for item in extra or []:
        if not item.is_file():
            raise PlatformError(f"--include {item}: no such file")
        files[item.name] = item.read_bytes()
    return files


def push_payload(reference: str, extra: list[Path] | None = None, slug: str | None = None) -> dict[str, Any]:
    """The JSON body of ``POST /api/envs`` for an env file or a registered env id."""
    path = Path(reference)
    if path.is_file():
        if not path.name.endswith(ENV_FILE_SUFFIXES):
            raise PlatformError(f"{reference}: an env file is .py, .json or .jsonl")
        files = collect(path, extra)
        encoded = {name: base64.b64encode(data).decode() for name, data in files.items()}
        return {"kind": "file", "main": path.name, "files": encoded, "slug": slug}
    if reference.endswith(ENV_FILE_SUFFIXES):
        raise PlatformError(f"{reference}: no such env file")
    return {"kind": "id", "id": reference, "slug": slug}
