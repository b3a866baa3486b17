"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.envs.adapters``, from ``rolloutgym_protocol.adapters``."""

from typing import TypeVar

from rolloutgym_protocol.adapters import (
    ActT,
    AsyncFromSync,
    ObsT,
    SyncFromAsync,
    as_async,
    as_sync,
)

ResultT = TypeVar("ResultT")

__all__ = [
    "ActT",
    "AsyncFromSync",
    "ObsT",
    "ResultT",
    "SyncFromAsync",
    "as_async",
    "as_sync",
]
