"""The rollout platform's clients: ``Client`` / ``AsyncClient``, the credentials of ``rolloutgym login``, and
what ``push`` uploads (:mod:`.envfiles`). They only speak HTTP.

The server itself (API, database, migrations, workers: ``rolloutgym platform serve``) is its own distribution,
``rolloutgym-platform`` (``pip install ./packages/rolloutgym-platform`` from a checkout); it imports only public
names of this package, and nothing here imports it.
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
