"""The rollout platform, self-hosted: ``rolloutgym platform serve`` and its clients.

``Client`` / ``AsyncClient`` talk to a running platform; the server side (``app``, ``db``,
``worker``) needs the ``platform`` extra (``pip install 'rolloutgym[platform]'``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AsyncClient", "AuthenticationError", "Client", "PlatformError", "ResourceNotFound", "ScopeError"]


def __getattr__(name: str) -> Any:
    if name in ("Client", "AsyncClient"):
        from . import client

        return getattr(client, name)
    if name in ("AuthenticationError", "ResourceNotFound", "PlatformError", "ScopeError"):
        from . import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'rolloutgym.platform' has no attribute {name!r}")
