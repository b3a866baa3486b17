"""Executors: where the rollouts of a run execute (``local`` asyncio, ``ray``).

An executor is handed a resolved env and a built policy (see :mod:`rolloutgym.sources`)
and only executes; it never resolves an env id itself.
"""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ..install_hints import pip_install
from .base import Executor, GroupJob, OnGroup, OnMember, reports_members
from .local import LocalExecutor

__all__ = [
    "Executor",
    "GroupJob",
    "LocalExecutor",
    "OnGroup",
    "OnMember",
    "get_executor",
    "reports_members",
]


def get_executor(name: str = "local", **options: Any) -> Executor:
    """Build an executor by name: ``local`` (default) or ``ray`` (the extra ``ray`` of rolloutgym)."""
    if name == "local":
        if options:
            raise ConfigError(f"the local executor takes no options, got {', '.join(sorted(options))}")
        return LocalExecutor()
    if name == "ray":
        try:
            from .ray import RayExecutor
        except ImportError as exc:
            raise ConfigError(f"the ray executor needs Ray: {pip_install('rolloutgym', 'ray')} ({exc})") from None
        return RayExecutor(**options)
    raise ConfigError(f"unknown executor '{name}'; choose 'local' or 'ray'")
