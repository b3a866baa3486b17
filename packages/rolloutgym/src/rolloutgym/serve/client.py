"""Clients of ``rolloutgym serve``: a served env that behaves like the local one.

``RemoteEnv`` is a ``gymnasium.Env`` (blocking calls), ``AsyncRemoteEnv`` an
``AsyncEnv``; both have the served env's spaces, ``tools``, ``metadata``, task and env
ids, and its ``oracle_action()``/``null_action()`` where it has them, so policies, the
rollout engine, ``rolloutgym run`` and the conformance kit use them unchanged::

    env = RemoteEnv("http://127.0.0.1:8000/toy/guess-v0", task=3)
    observation, info = env.reset(seed=0)

    env = await AsyncRemoteEnv.open("http://127.0.0.1:8000/toy/guess-v0", task=3)  # WebSocket
    env = await PendingRemoteEnv("http://127.0.0.1:8000/toy/guess-v0", task=3)  # the same, built sync

``PendingRemoteEnv`` is what a run's ``make_env`` returns for an env URL: building it does no
I/O, and awaiting it (the rollout engine awaits what ``make_env`` returns) opens the session
over the loop's WebSocket, so many members opening at once never block the event loop.

Each instance is one session on the server; ``close()`` ends it. A server that cannot be
reached raises :class:`RemoteEnvError`; errors of the env or of the request come back as
the class the server raised (``TaskNotFound``, ``InvalidAction``, ``ValueError`` …).

This module holds the sync client and :func:`make_remote`; ``AsyncRemoteEnv`` and
``PendingRemoteEnv`` are in ``client_async.py``, what both clients hold of a session in
``_client_session.py``, and the requests outside a session (URLs, credentials, answers,
``env_info``/``env_tasks``/``open_session``) in ``client_requests.py``.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
from rolloutgym_protocol.errors import EnvClosedError

from ._client_session import _NOTHING, _Described
from ._errors import RemoteEnvError
from .client_async import AsyncRemoteEnv, PendingRemoteEnv
from .client_requests import (
    DEFAULT_TIMEOUT,
    _answer,
    _headers,
    _unreachable,
    _ws_answer,
    open_session,
    parse_env_url,
    tls_verify,
)

__all__ = ["RemoteEnv", "make_remote"]


class RemoteEnv(_Described, gym.Env[Any, Any]):
    """A served env as a ``gymnasium.Env``: one session, blocking calls over HTTP (or ``transport="ws"``).

    Args:
        url: ``http://HOST:PORT/NAMESPACE/NAME-vN``.
        task: task index or id (default: the first task).
        token: bearer token (default: ``$ROLLOUTGYM_SERVE_TOKEN``).
        kwargs: env factory keyword arguments (the server must allow them).
    """

    def __init__(
        self,
        url: str,
        *,
        task: int | str | None = None,
        token: str | None = None,
        transport: str = "http",
        timeout: float = DEFAULT_TIMEOUT,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        self._setup(url, token, transport, timeout)
        body = {"env": self._env_id, "task": task, "kwargs": kwargs}
        try:
            description = (
                self._ws({"op": "open", **body}) if transport == "ws" else self._http("POST", "/sessions", body)
            )
        except BaseException:
            self._release()
            raise
        self._finish(description)

    def _setup(self, url: str, token: str | None, transport: str, timeout: float) -> None:
        import httpx

        if transport not in ("http", "ws"):
            raise ValueError(f"transport must be 'http' or 'ws', got {transport!r}")
        self.url = url
        self.base_url, self._env_id = parse_env_url(url)
        self.transport = transport
        self._headers = _headers(token)
        self._timeout = timeout
        self._socket: Any = None
        self._client = httpx.Client(
            base_url=self.base_url, headers=self._headers, timeout=timeout, verify=tls_verify(self.base_url)
        )

    @classmethod
    def adopt(
        cls, url: str, description: dict[str, Any], *, token: str | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> RemoteEnv:
        """Stand in for a session already opened over HTTP (its ``POST /sessions`` answer)."""
        environment = cls.__new__(cls)
        environment._setup(url, token, "http", timeout)
        environment._finish(description)
        return environment

    def _http(self, method: str, path: str, body: Any = None) -> Any:
        import httpx

        try:
            response = self._client.request(
                method,
                path,
                content=json.dumps(body) if body is not None else None,
                headers={"content-type": "application/json"},
            )
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from None
        return _answer(response)

    def _ws(self, message: dict[str, Any]) -> Any:
        from websockets.exceptions import WebSocketException
        from websockets.sync.client import connect

        try:
            if self._socket is None:
                url = self.base_url.replace("http", "ws", 1) + "/ws"
                self._socket = connect(
                    url,
                    additional_headers=self._headers,
                    compression=None,
                    proxy=None,
                    max_size=None,
                    open_timeout=self._timeout,
                )
            self._socket.send(json.dumps(message))
            return _ws_answer(self._socket.recv(timeout=self._timeout))
        except (WebSocketException, OSError, TimeoutError) as exc:
            raise _unreachable(self.base_url, exc) from None

    def _request(self, operation: str, body: dict[str, Any]) -> Any:
        if self._closed:
            raise EnvClosedError(f"{self!r} is closed; open a new env")
        if self.transport == "ws":
            return self._ws({"op": operation, **body})
        return self._http("POST", f"/sessions/{self.session_id}/{operation}", body)

    def _call(self, method: str) -> Any:
        return self._request("call", {"method": method})["result"]

    def _oracle_action(self) -> Any:
        value = self._prefetched()
        return self._call("oracle_action") if value is _NOTHING else value

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return self._reset_result(self._request("reset", self._prefetching({"seed": seed, "options": options})))

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        from ._codec import encode_value

        return self._step_result(self._request("step", self._prefetching({"action": encode_value(action)})))

    def close(self) -> None:
        if getattr(self, "_closed", True):
            self._release()
            return
        self._closed = True
        try:
            if self.transport == "ws":
                self._ws({"op": "close"})
            else:
                self._http("DELETE", f"/sessions/{self.session_id}")
        except RemoteEnvError:
            pass  # the server is gone, and the session with it (or reaped when it comes back)
        finally:
            self._release()

    def _release(self) -> None:
        if self._socket is not None:
            socket, self._socket = self._socket, None
            try:
                socket.close()
            except Exception:  # noqa: BLE001 - closing a broken socket
                pass
        self._client.close()


def make_remote(
    url: str,
    *,
    task: int | str | None = None,
    token: str | None = None,
    kwargs: dict[str, Any] | None = None,
    asynchronous: bool | None = None,
) -> RemoteEnv | AsyncRemoteEnv | PendingRemoteEnv:
    """What ``rolloutgym.make(URL)`` returns: like the served env, a sync ``RemoteEnv`` for a
    sync env and an ``AsyncRemoteEnv`` for an async one.

    ``asynchronous=True`` (``rolloutgym.make_async(URL)``): a :class:`PendingRemoteEnv`, an
    ``AsyncEnv`` that opens its session when awaited (over the loop's WebSocket, never blocking
    the event loop: the rollout engine awaits it) or, used directly, on first use.
    """
    if task is not None and (isinstance(task, bool) or not isinstance(task, (int, str))):
        raise TypeError(
            f"a remote env takes a task index or a task id, got {type(task).__name__}; the server holds the task items"
        )
    if asynchronous:
        return PendingRemoteEnv(url, task=task, token=token, kwargs=kwargs)
    description = open_session(url, task=task, token=token, kwargs=kwargs)
    if asynchronous is None and description.get("async"):
        return AsyncRemoteEnv.adopt(url, description, token=token)
    return RemoteEnv.adopt(url, description, token=token)
