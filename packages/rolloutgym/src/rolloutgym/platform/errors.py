"""Errors of the platform and its clients: one line that names the problem and the fix."""

from __future__ import annotations

from rolloutgym_protocol.errors import RolloutGymError

__all__ = ["AuthenticationError", "PlatformError", "ResourceNotFound", "ScopeError"]


class PlatformError(RolloutGymError):
    """A platform request failed (the message is the server's one-line answer)."""

    status: int | None = None

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class AuthenticationError(PlatformError):
    """The API key is missing or wrong, or the endpoint answered with a login page or a redirect."""


class ResourceNotFound(PlatformError):
    """No such env, run or job (for this key's organisation)."""


class ScopeError(PlatformError):
    """The key lacks the scope the request needs (run, push or train)."""
