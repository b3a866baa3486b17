"""rolloutgym-platform: the rollout platform, self-hosted (``rolloutgym platform serve``).

The HTTP API (:mod:`.app`), its database (:mod:`.models`, :mod:`.db`, the Alembic migrations in
``migrations/``), the workers that run queued runs and training jobs (:mod:`.worker`), and the
``platform`` commands it adds to the ``rolloutgym`` CLI (:mod:`.cli`, through the core's
``rolloutgym_commands`` hook). The clients (``rolloutgym.Client``, ``login``, ``push``,
``run --remote``, ``improve``, ``jobs``) are the core's: a user of a remote platform installs
none of this. It imports only public names of ``rolloutgym`` and ``rolloutgym_protocol``.
"""

from __future__ import annotations

__all__ = ["create_app", "open_database", "serve"]


def __getattr__(name: str) -> object:
    if name == "create_app":
        from .app import create_app

        return create_app
    if name == "open_database":
        from .db import open_database

        return open_database
    if name == "serve":
        from .server import serve

        return serve
    raise AttributeError(f"module 'rolloutgym_platform' has no attribute {name!r}")
