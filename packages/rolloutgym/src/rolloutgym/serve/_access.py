"""Who may call the server, and who owns a session.

Authentication is a property of the route table, denied by default: :class:`AccessGuard`
lets a request through without a valid bearer token only when the route that would answer
it is marked public (``public_route``); only ``GET /health`` is. Any other path, including
one that matches no route, needs the token (an unknown path answers 401 before 404, so an
unauthenticated client learns nothing about what is served).

Every session has an owner: a digest of the bearer token and the client key
(``X-RolloutGym-Key``) of the request that opened it. Only its owner can list, step,
reset, call or close it; to anyone else it does not exist (404). The rolloutgym clients
send a random key per process (``ROLLOUTGYM_SERVE_KEY`` sets it), so clients sharing one
token still cannot reach each other's sessions.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from starlette.routing import BaseRoute, Match
from starlette.websockets import WebSocket

from ._errors import Unauthorized, error_body
from ._http import json_response

__all__ = ["KEY_HEADER", "OWNER_SCOPE_KEY", "AccessGuard", "Credentials", "owner_of", "public_route"]

KEY_HEADER = "x-rolloutgym-key"
OWNER_SCOPE_KEY = "rolloutgym.owner"
_MAX_KEY = 256


def public_route(route: BaseRoute) -> BaseRoute:
    """Mark ``route`` as answering without a token (the guard denies every other route)."""
    route.rolloutgym_public = True  # type: ignore[attr-defined]
    return route


def owner_of(scope: Mapping[str, Any]) -> str:
    """The owner the guard found for this request (every non-public handler has one)."""
    owner = scope.get(OWNER_SCOPE_KEY)
    if not isinstance(owner, str):
        raise Unauthorized("this request carries no credentials")
    return owner


class Credentials:
    """The bearer tokens a server accepts (none: no token needed)."""

    def __init__(self, tokens: Iterable[str] | None) -> None:
        self.tokens = [token.encode() for token in tokens or () if token]

    def owner(self, headers: Mapping[str, str]) -> str | None:
        """The owner for a request's headers; ``None`` when the token is missing or wrong."""
        scheme, _, value = headers.get("authorization", "").partition(" ")
        presented = value.strip().encode() if scheme.lower() == "bearer" else b""
        if self.tokens:
            matched = False
            for token in self.tokens:  # every token compared: the time does not say which matched
                matched |= hmac.compare_digest(presented, token)
            if not matched:
                return None
        key = headers.get(KEY_HEADER, "")[:_MAX_KEY].encode("utf-8", "backslashreplace")
        return hashlib.sha256(presented + b"\0" + key).hexdigest()[:32]


_UNAUTHORIZED = (
    "this server needs a bearer token: send 'Authorization: Bearer TOKEN' "
    "(RemoteEnv(..., token=...) or ROLLOUTGYM_SERVE_TOKEN)"
)


class AccessGuard:
    """ASGI middleware: a request needs a valid token unless its route is public."""

    def __init__(self, app: Any, credentials: Credentials, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.credentials = credentials
        self.routes = routes

    def public(self, scope: dict[str, Any]) -> bool:
        """Whether the route that answers ``scope`` is marked public (no route: not public)."""
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return bool(getattr(route, "rolloutgym_public", False))
        return False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind in ("http", "websocket"):
            headers = {
                key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", ())
            }
            owner = self.credentials.owner(headers)
            if owner is None and not self.public(scope):
                if kind == "websocket":
                    await WebSocket(scope, receive, send).close(code=1008, reason="missing or wrong bearer token")
                else:
                    await json_response(error_body(Unauthorized(_UNAUTHORIZED)), 401)(scope, receive, send)
                return
            scope[OWNER_SCOPE_KEY] = owner
        await self.app(scope, receive, send)
