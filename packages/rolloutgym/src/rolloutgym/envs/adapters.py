"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.envs.adapters``, from ``rolloutgym_protocol.adapters``."""

from rolloutgym_protocol.adapters import (
    ActT,
    AsyncFromSync,
    ObsT,
    SyncFromAsync,
    as_async,
    as_sync,
)

__all__ = [
    "ActT",
    "AsyncFromSync",
    "ObsT",
    "SyncFromAsync",
    "as_async",
    "as_sync",
]
