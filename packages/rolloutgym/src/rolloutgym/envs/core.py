"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.envs.core``, from ``rolloutgym_protocol.envs``."""

from rolloutgym_protocol.envs import (
    ActT,
    AsyncEnv,
    AsyncSingleTurnEnv,
    ObsT,
    SingleTurnEnv,
)

__all__ = [
    "ActT",
    "AsyncEnv",
    "AsyncSingleTurnEnv",
    "ObsT",
    "SingleTurnEnv",
]
