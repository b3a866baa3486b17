"""rolloutlib 0.2.0 compatibility: the names of ``rolloutlib.envs.checking``, from ``rolloutgym_protocol``."""

from rolloutgym_protocol import (
    check_async_env,
    check_env,
)

__all__ = [
    "check_async_env",
    "check_env",
]
