"""Who may call the server, who owns a session, and how many sessions an owner may hold.

Authentication is decided by the route that answers, after routing: every route of the
table is wrapped by :func:`guard_routes` (denied by default), so the decision is made on
the decoded path the router matched, never on the request's spelling. A route marked
public (``public_route``; only ``GET /health``) answers without a token, and only to its
own spelling: ``/%68ealth``, ``/health/``, ``//health`` or ``/./health`` need the token like
every other path. A path that matches no route, or a method a route does not allow,
answers 401 before 404/405 (an unauthenticated client learns nothing about what is
served); paths are never redirected (``redirect_slashes`` is off).

The token is sent as ``Authorization: Bearer TOKEN``, or as the password of HTTP Basic
authentication (``Basic base64(USER:TOKEN)``, what a WebSocket client sends for a URL
``ws://USER:TOKEN@HOST/...``; openenv-core 0.3.0's client can send nothing else), or, with
no ``Authorization`` header, as ``X-API-Key: TOKEN`` (what the ``openreward`` SDK sends).

Every session has an owner: a SHA-256 digest of the whole bearer token and the whole
client key (``X-RolloutGym-Key``) of the request that opened it, each length-prefixed (two
keys that share any prefix are two owners). Only its owner can list, step, reset, call
or close it; to anyone else it does not exist (404). The rolloutgym clients send a random
key per process (``ROLLOUTGYM_SERVE_KEY`` sets it). A request without a key is
*anonymous*: its owner also digests the peer's address, no listing shows an anonymous
owner's sessions (``GET /sessions`` is empty), and its sessions are reached only by their
ids (128 random bits), so two keyless clients never see each other's sessions.

Quotas are per owner (``max_sessions_per_owner``): one client cannot fill the server's
``--max-sessions`` and lock the others out.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from starlette.routing import BaseRoute, Route
from starlette.websockets import WebSocket

from ._errors import Unauthorized, error_body
from ._http import json_response

__all__ = [
    "ANONYMOUS_PREFIX",
    "KEY_HEADER",
    "OWNER_SCOPE_KEY",
    "AccessGuard",
    "Credentials",
    "deny_unless_authorized",
    "guard_routes",
    "is_anonymous",
    "owner_of",
    "public_route",
]

KEY_HEADER = "x-rolloutgym-key"
OWNER_SCOPE_KEY = "rolloutgym.owner"
ANONYMOUS_PREFIX = "anon-"


def public_route(route: BaseRoute) -> BaseRoute:
    """Mark ``route`` as answering without a token, to its own spelling (every other route needs it)."""
    route.rolloutgym_public = True  # type: ignore[attr-defined]
    return route


def is_anonymous(owner: str) -> bool:
    """Whether ``owner`` is a keyless client's (its sessions are listed to no one)."""
    return owner.startswith(ANONYMOUS_PREFIX)


def owner_of(scope: Mapping[str, Any]) -> str:
    """The owner the guard found for this request (every non-public handler has one)."""
    owner = scope.get(OWNER_SCOPE_KEY)
    if not isinstance(owner, str):
        raise Unauthorized("this request carries no credentials")
    return owner


def _field(value: bytes) -> bytes:
    return len(value).to_bytes(8, "big") + value


def _presented_token(authorization: str) -> bytes:
    """The token of ``Authorization: Bearer TOKEN``, or the password of ``Basic base64(USER:TOKEN)``.

    Basic is what a WebSocket client sends for a URL with user info (``ws://user:TOKEN@host``),
    the only way ``openenv-core`` 0.3.0's client can carry a token.
    """
    scheme, _, value = authorization.partition(" ")
    scheme = scheme.lower()
    if scheme == "bearer":
        return value.strip().encode()
    if scheme == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True)
        except (ValueError, binascii.Error):
            return b""
        user, colon, password = decoded.partition(b":")
        return password if colon else b""
    return b""


class Credentials:
    """The bearer tokens a server accepts (none: no token needed)."""

    def __init__(self, tokens: Iterable[str] | None) -> None:
        self.tokens = [token.encode() for token in tokens or () if token]

    def owner(self, headers: Mapping[str, str], peer: Any = None) -> str | None:
        """The owner for a request's headers; ``None`` when the token is missing or wrong."""
        authorization = headers.get("authorization", "")
        presented = _presented_token(authorization) if authorization else headers.get("x-api-key", "").strip().encode()
        if self.tokens:
            matched = False
            for token in self.tokens:  # every token compared: the time does not say which matched
                matched |= hmac.compare_digest(presented, token)
            if not matched:
                return None
        key = headers.get(KEY_HEADER, "").encode("utf-8", "backslashreplace")
        if key:
            return hashlib.sha256(_field(presented) + _field(key)).hexdigest()
        host = str(peer[0]) if isinstance(peer, (list, tuple)) and peer else ""
        digest = hashlib.sha256(_field(presented) + _field(b"") + _field(host.encode()))
        return ANONYMOUS_PREFIX + digest.hexdigest()


UNAUTHORIZED = (
    "this server needs a bearer token: send 'Authorization: Bearer TOKEN' "
    "(RemoteEnv(..., token=...) or ROLLOUTGYM_SERVE_TOKEN)"
)


async def deny_unless_authorized(scope: dict[str, Any], receive: Any, send: Any) -> bool:
    """Answer 401 (HTTP) or close 1008 (WebSocket) when ``scope`` has no valid credentials; ``True`` if denied."""
    if isinstance(scope.get(OWNER_SCOPE_KEY), str):
        return False
    if scope["type"] == "websocket":
        await WebSocket(scope, receive, send).close(code=1008, reason="missing or wrong bearer token")
    else:
        await json_response(error_body(Unauthorized(UNAUTHORIZED)), 401)(scope, receive, send)
    return True


def _spelled_as(route: BaseRoute, scope: Mapping[str, Any]) -> bool:
    """Whether the request's raw path is the route's own path, byte for byte."""
    raw = scope.get("raw_path")
    if not isinstance(raw, bytes):
        return False
    return isinstance(route, Route) and raw.split(b"?", 1)[0] == route.path.encode()


class _Guarded:
    """A routed route's ASGI app, behind the token check (the route that answers decides)."""

    def __init__(self, route: BaseRoute, app: Any) -> None:
        self.route = route
        self.app = app
        self.public = bool(getattr(route, "rolloutgym_public", False))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not (self.public and _spelled_as(self.route, scope)) and await deny_unless_authorized(scope, receive, send):
            return
        await self.app(scope, receive, send)


def guard_routes(routes: Sequence[BaseRoute]) -> None:
    """Put every route's app behind the token check, in place (what the router calls after matching)."""
    for route in routes:
        app = getattr(route, "app", None)
        if app is None or isinstance(app, _Guarded):
            continue
        route.app = _Guarded(route, app)  # type: ignore[attr-defined]


class AccessGuard:
    """ASGI middleware: finds the request's owner (``None``: no valid token); the routes decide."""

    def __init__(self, app: Any, credentials: Credentials) -> None:
        self.app = app
        self.credentials = credentials

    @property
    def routes(self) -> list[BaseRoute]:
        """The wrapped app's route table."""
        return list(getattr(self.app, "routes", ()))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = {
                key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", ())
            }
            scope[OWNER_SCOPE_KEY] = self.credentials.owner(headers, scope.get("client"))
        await self.app(scope, receive, send)
