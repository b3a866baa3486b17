"""The client's requests to ``rolloutgym serve`` outside a session: addresses, credentials, answers.

An env URL names a server and an env id (:func:`parse_env_url`); every request carries the
bearer token and this process's client key (:func:`_headers`); an answer is the JSON body or
the error class the server raised (:func:`_answer`, :func:`_ws_reply`). The one-shot requests:
:func:`env_info`, :func:`env_tasks` and :func:`open_session` (one blocking ``POST /sessions``,
whose answer ``RemoteEnv.adopt``/``AsyncRemoteEnv.adopt`` stand in for).
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import ssl
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from rolloutgym_protocol.specs import is_env_url

from ._codec import loads
from ._errors import RemoteEnvError, error_from_body

__all__ = ["DEFAULT_TIMEOUT", "env_info", "env_tasks", "open_session", "parse_env_url"]

TOKEN_VARIABLE = "ROLLOUTGYM_SERVE_TOKEN"
KEY_VARIABLE = "ROLLOUTGYM_SERVE_KEY"
KEY_HEADER = "x-rolloutgym-key"
# The client key of this process: with the token, it names the owner of the sessions this
# process opens, so other clients of the same token cannot list or step them.
_PROCESS_KEY = secrets.token_hex(16)
DEFAULT_TIMEOUT = 300.0


def parse_env_url(url: str) -> tuple[str, str]:
    """``"http://host:8000/sql/shop-v0"`` -> ``("http://host:8000", "sql/shop-v0")``.

    The env id is the last two path segments; anything before them is the server's base
    path (a server behind a proxy prefix). ``ws://`` becomes ``http://``.
    """
    if not is_env_url(url):
        raise ValueError(f"not an env URL: {url!r}; use http://HOST:PORT/NAMESPACE/NAME-vN")
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    segments = [segment for segment in parts.path.split("/") if segment]
    if len(segments) < 2:
        raise ValueError(
            f"env URL {url!r} names no environment: add its id after the server address, "
            f"e.g. {scheme}://{parts.netloc}/toy/guess-v0 (GET {scheme}://{parts.netloc}/envs lists them)"
        )
    base_path = "/".join(segments[:-2])
    base = urlunsplit((scheme, parts.netloc, f"/{base_path}" if base_path else "", "", ""))
    return base, "/".join(segments[-2:])


def tls_verify(base_url: str) -> ssl.SSLContext | bool:
    """httpx's ``verify`` for a client of ``base_url``: none for ``http://``, one shared context for ``https://``.

    httpx builds a TLS context for every client it makes (``httpx.get`` makes one per call),
    loading the CA bundle even for ``http://`` addresses: ~40 ms of CPU each, more than a
    thousand loopback steps. These clients follow no redirects and send every request to
    the server's own address, so a plain-HTTP client never uses TLS; an ``https://`` client
    gets httpx's default context (``$SSL_CERT_FILE`` and all), built once per process.
    """
    return _default_tls_context() if base_url.startswith("https:") else False


@functools.cache
def _default_tls_context() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()


def _headers(token: str | None) -> dict[str, str]:
    """The credentials of a request: the bearer token and this process's client key (``$ROLLOUTGYM_SERVE_KEY``)."""
    token = token if token is not None else os.environ.get(TOKEN_VARIABLE)
    headers = {KEY_HEADER: os.environ.get(KEY_VARIABLE) or _PROCESS_KEY}
    if token:
        headers["authorization"] = f"Bearer {token}"
    return headers


def _unreachable(base: str, exc: BaseException) -> RemoteEnvError:
    return RemoteEnvError(
        f"cannot reach the rolloutgym server at {base}: {type(exc).__name__}: {exc}. "
        "Is 'rolloutgym serve' running there (and the session still open)?"
    )


def _answer(response: Any) -> Any:
    try:
        body = response.json()
    except (json.JSONDecodeError, ValueError):
        body = None
    if response.status_code >= 400:
        raise error_from_body(
            body if body is not None else {"error": {"type": "RemoteEnvError", "message": response.text[:300]}},
            response.status_code,
        )
    return body


def _ws_answer(raw: Any) -> Any:
    return _ws_reply(loads(raw))


def _ws_reply(message: dict[str, Any]) -> Any:
    if message.get("ok"):
        return message.get("result")
    raise error_from_body(message, int(message.get("status") or 500))


def env_info(url: str, *, token: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The served env's description (id, version, plugin, budgets, number of tasks)."""
    import httpx

    base, env_id = parse_env_url(url)
    try:
        response = httpx.get(
            f"{base}/envs/{quote(env_id)}", headers=_headers(token), timeout=timeout, verify=tls_verify(base)
        )
    except httpx.TransportError as exc:
        raise _unreachable(base, exc) from None
    return _answer(response)  # type: ignore[no-any-return]


def env_tasks(url: str, *, token: str | None = None, timeout: float = 30.0) -> list[dict[str, Any]]:
    """The served env's tasks: ``[{"index", "id", "split", "item"?}]``."""
    import httpx

    base, env_id = parse_env_url(url)
    try:
        response = httpx.get(
            f"{base}/envs/{quote(env_id)}/tasks", headers=_headers(token), timeout=timeout, verify=tls_verify(base)
        )
    except httpx.TransportError as exc:
        raise _unreachable(base, exc) from None
    return _answer(response)["tasks"]  # type: ignore[no-any-return]


def open_session(
    url: str,
    *,
    task: int | str | None = None,
    token: str | None = None,
    kwargs: dict[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """Open a session with one blocking ``POST /sessions``; returns its description."""
    import httpx

    base, env_id = parse_env_url(url)
    try:
        response = httpx.post(
            f"{base}/sessions",
            json={"env": env_id, "task": task, "kwargs": kwargs},
            headers=_headers(token),
            timeout=timeout,
            verify=tls_verify(base),
        )
    except httpx.TransportError as exc:
        raise _unreachable(base, exc) from None
    return _answer(response)  # type: ignore[no-any-return]
