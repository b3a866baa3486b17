"""Environments as a service: ``rolloutgym serve``, remote envs, and MCP.

Server side, :func:`create_app` builds the ASGI app (a :class:`Catalog` of served envs and
a :class:`SessionManager` of live env instances) and :func:`serve` runs it with uvicorn.
Client side, :class:`RemoteEnv` (a ``gymnasium.Env``) and :class:`AsyncRemoteEnv` (an
``AsyncEnv``) stand in for a served env; ``rolloutgym.make("http://HOST:PORT/ENV_ID")``
returns one. Needs the ``serve`` extra: ``pip install './packages/rolloutgym[serve]'`` from a checkout.
"""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol.specs import is_env_url

from ._errors import RemoteEnvError, RequestTooLarge, ServerBusy, SessionNotFound, Unauthorized
from .client import RemoteEnv, make_remote
from .client_async import AsyncRemoteEnv
from .client_requests import env_info, env_tasks, open_session, parse_env_url

__all__ = [
    "AsyncRemoteEnv",
    "Catalog",
    "RemoteEnv",
    "RemoteEnvError",
    "RequestTooLarge",
    "ServeConfig",
    "ServerBusy",
    "ServerProcess",
    "SessionManager",
    "SessionNotFound",
    "Unauthorized",
    "create_app",
    "env_info",
    "env_tasks",
    "free_port",
    "is_env_url",
    "make_remote",
    "open_session",
    "parse_env_url",
    "serve",
]

_SERVER = {
    "ServerProcess": "process",
    "free_port": "process",
    "Catalog": "catalog",
    "SessionManager": "sessions",
    "ServeConfig": "app",
    "create_app": "app",
    "serve": "_run",
}


def __getattr__(name: str) -> Any:
    # The server stack (starlette, uvicorn) is imported only by those who serve.
    if name in _SERVER:
        import importlib

        value = getattr(importlib.import_module(f".{_SERVER[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rolloutgym.serve' has no attribute {name!r}")
