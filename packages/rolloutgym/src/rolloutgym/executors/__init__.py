"""Executors: where the rollouts of a run execute (``local`` asyncio, ``ray``)."""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol.errors import ConfigError

from .base import EnvSource, Executor, GroupJob, OnGroup, PolicySource, ResolvedEnv
from .local import LocalExecutor

__all__ = ["EnvSource", "Executor", "GroupJob", "LocalExecutor", "OnGroup", "PolicySource", "ResolvedEnv", "get_executor"]


def get_executor(name: str = "local", **options: Any) -> Executor:
    """Build an executor by name: ``local`` (default) or ``ray`` (``pip install rolloutgym[ray]``)."""
    if name == "local":
        return LocalExecutor(**options)
    if name == "ray":
        try:
            from .ray import RayExecutor
        except ImportError as exc:
            raise ConfigError(f"the ray executor needs Ray: pip install 'rolloutgym[ray]' ({exc})") from None
        return RayExecutor(**options)
    raise ConfigError(f"unknown executor '{name}'; choose 'local' or 'ray'")
