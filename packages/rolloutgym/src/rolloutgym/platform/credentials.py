"""Where the client finds its endpoint and API key.

``~/.config/rolloutgym/credentials`` (``$XDG_CONFIG_HOME`` when set) holds one entry per
endpoint and the default endpoint, written with mode 0600. ``ROLLOUTGYM_API_KEY`` and
``ROLLOUTGYM_ENDPOINT`` override it (the rollout SDK's ``ROLLOUT_API_KEY``/``ROLLOUT_ENDPOINT`` are aliases,
read when ours are unset); arguments to ``Client()`` override both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import AuthenticationError

DEFAULT_ENDPOINT = "http://127.0.0.1:8600"


def credentials_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "rolloutgym" / "credentials"


def _read() -> dict[str, Any]:
    path = credentials_path()
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def normalize(endpoint: str) -> str:
    return endpoint.rstrip("/")


def save(endpoint: str, api_key: str) -> Path:
    """Store ``api_key`` for ``endpoint`` (and make it the default); the file is mode 0600."""
    endpoint = normalize(endpoint)
    data = _read()
    data.setdefault("endpoints", {})[endpoint] = {"api_key": api_key}
    data["default"] = endpoint
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    os.chmod(path, 0o600)
    return path


def _environ(name: str) -> str | None:
    """``ROLLOUTGYM_<name>``, else the rollout SDK's spelling ``ROLLOUT_<name>`` (an alias, never ignored)."""
    return os.environ.get(f"ROLLOUTGYM_{name}") or os.environ.get(f"ROLLOUT_{name}") or None


def saved_endpoint() -> str:
    """The endpoint a command without a URL uses: the environment's, else the one saved last, else the default."""
    return normalize(_environ("ENDPOINT") or _read().get("default") or DEFAULT_ENDPOINT)


def resolve(endpoint: str | None = None, api_key: str | None = None) -> tuple[str, str]:
    """The (endpoint, key) to use: arguments, else the environment variables, else the credentials file."""
    data = _read()
    chosen = normalize(endpoint or _environ("ENDPOINT") or data.get("default") or DEFAULT_ENDPOINT)
    key = api_key or _environ("API_KEY") or data.get("endpoints", {}).get(chosen, {}).get("api_key")
    if not key:
        raise AuthenticationError(f"no API key for {chosen}: run 'rolloutgym login {chosen}' or set ROLLOUTGYM_API_KEY")
    return chosen, key
