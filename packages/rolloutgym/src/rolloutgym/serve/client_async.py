"""The asynchronous client of ``rolloutgym serve``: :class:`AsyncRemoteEnv` and :class:`PendingRemoteEnv`.

``AsyncRemoteEnv`` is a served env as an ``AsyncEnv`` (one session, over the loop's shared
WebSocket or HTTP); ``PendingRemoteEnv`` is what a run's ``make_env`` returns for an env URL:
building it does no I/O, and awaiting it opens the session without blocking the event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from typing import Any

import msgspec
from rolloutgym_protocol import AsyncEnv
from rolloutgym_protocol.errors import EnvClosedError

from ._client_session import _NOTHING, _Described
from ._codec import dumps_fast, encode_value
from ._errors import RemoteEnvError
from .client_requests import (
    DEFAULT_TIMEOUT,
    _answer,
    _headers,
    _unreachable,
    _ws_reply,
    open_session,
    parse_env_url,
    tls_verify,
)

__all__ = ["AsyncRemoteEnv", "PendingRemoteEnv"]


class AsyncRemoteEnv(_Described, AsyncEnv[Any, Any]):
    """A served env as an :class:`AsyncEnv`: one session over a WebSocket (or ``transport="http"``).

    Create it with ``await AsyncRemoteEnv.open(url, task=...)``; the constructor does the
    same with a blocking call (for synchronous factories such as ``rolloutgym.make_async``).
    """

    def __init__(
        self,
        url: str,
        *,
        task: int | str | None = None,
        token: str | None = None,
        transport: str = "ws",
        timeout: float = DEFAULT_TIMEOUT,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        self._setup(url, token, transport, timeout)
        self._finish(open_session(url, task=task, token=token, kwargs=kwargs, timeout=timeout))
        self._attach = transport == "ws"  # the WebSocket adopts the HTTP session on first use

    def _setup(self, url: str, token: str | None, transport: str, timeout: float) -> None:
        if transport not in ("http", "ws"):
            raise ValueError(f"transport must be 'http' or 'ws', got {transport!r}")
        self.url = url
        self.base_url, self._env_id = parse_env_url(url)
        self.transport = transport
        self._headers = _headers(token)
        self._timeout = timeout
        self._socket: Any = None
        self._client: Any = None
        self._attach = False

    @classmethod
    def adopt(
        cls,
        url: str,
        description: dict[str, Any],
        *,
        token: str | None = None,
        transport: str = "ws",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> AsyncRemoteEnv:
        """Stand in for a session already opened over HTTP (the WebSocket attaches to it on first use)."""
        environment = cls.__new__(cls)
        environment._setup(url, token, transport, timeout)
        environment._finish(description)
        environment._attach = transport == "ws"
        return environment

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        task: int | str | None = None,
        token: str | None = None,
        transport: str = "ws",
        timeout: float = DEFAULT_TIMEOUT,
        kwargs: dict[str, Any] | None = None,
    ) -> AsyncRemoteEnv:
        """Open a session without blocking the event loop."""
        environment = cls.__new__(cls)
        environment._setup(url, token, transport, timeout)
        body = {"env": environment._env_id, "task": task, "kwargs": kwargs}
        try:
            if transport == "ws":
                description = await environment._ws({"op": "open", **body})
            else:
                description = await environment._http("POST", "/sessions", body)
        except BaseException:
            await environment._release()
            raise
        environment._finish(description)
        return environment

    async def _http(self, method: str, path: str, body: Any = None) -> Any:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(
                base_url=self.base_url, headers=self._headers, timeout=self._timeout, verify=tls_verify(self.base_url)
            )
        try:
            response = await self._client.request(
                method,
                path,
                content=json.dumps(body) if body is not None else None,
                headers={"content-type": "application/json"},
            )
        except httpx.TransportError as exc:
            raise _unreachable(self.base_url, exc) from None
        return _answer(response)

    async def _ws(self, message: dict[str, Any], strict: bool = False) -> Any:
        """One request on this loop's shared WebSocket to the server (see ``_channel.py``).

        ``strict``: ``message`` holds strict JSON data only (ids, ``encode_value`` output).
        """
        if self._socket is None:
            from ._channel import acquire_channel

            url = self.base_url.replace("http", "ws", 1) + "/ws"
            self._socket = await acquire_channel(url, self._headers, self._timeout)
            if self._attach:
                self._attach = False
                _ws_reply(await self._socket.request({"op": "attach", "session": self.session_id}, strict=True))
        if message.get("op") != "open":
            message["session"] = self.session_id
        return _ws_reply(await self._socket.request(message, strict))

    async def _request(self, operation: str, body: dict[str, Any], strict: bool = False) -> Any:
        if self._closed:
            raise EnvClosedError(f"{self!r} is closed; open a new env")
        if self.transport == "ws":
            return await self._ws({"op": operation, **body}, strict)
        return await self._http("POST", f"/sessions/{self.session_id}/{operation}", body)

    async def _call(self, method: str) -> Any:
        return (await self._request("call", {"method": method}, type(method) is str))["result"]

    async def _oracle_action(self) -> Any:
        value = self._prefetched()
        return await self._call("oracle_action") if value is _NOTHING else value

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        body = self._prefetching({"seed": seed, "options": options})
        strict = options is None and (seed is None or type(seed) is int)  # else json.dumps, with its errors
        return self._reset_result(await self._request("reset", body, strict))

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        channel = self._socket
        if channel is not None and not self._closed:  # the hot path: the open WebSocket, no layer between
            written = dumps_fast(action)
            # strict JSON data: the action as orjson wrote it (msgspec embeds it as is), else its to_jsonable copy
            message = self._prefetching(
                {
                    "op": "step",
                    "action": msgspec.Raw(written) if written is not None else encode_value(action),
                    "session": self.session_id,
                }
            )
            return self._step_result(_ws_reply(await channel.request(message, True)))
        body = self._prefetching({"action": encode_value(action)})  # strict JSON data
        return self._step_result(await self._request("step", body, strict=True))

    async def close(self) -> None:
        if getattr(self, "_closed", True):
            await self._release()
            return
        self._closed = True
        try:
            if self.transport == "ws" and (self._socket is not None or self._attach):
                if self._socket is not None:
                    await self._ws({"op": "close"}, strict=True)
                else:  # never used: end the HTTP-opened session over HTTP
                    await self._http("DELETE", f"/sessions/{self.session_id}")
            else:
                await self._http("DELETE", f"/sessions/{self.session_id}")
        except RemoteEnvError:
            pass  # the server is gone, and the session with it
        finally:
            await self._release()

    async def _release(self) -> None:
        if self._socket is not None:
            channel, self._socket = self._socket, None
            channel.release()
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


class PendingRemoteEnv:
    """An :class:`AsyncRemoteEnv` whose session opens when it is first awaited (no I/O until then).

    ``await pending`` opens the session with :meth:`AsyncRemoteEnv.open` (over the loop's
    WebSocket: the event loop is never blocked) and returns the env; the rollout engine, the
    Ray worker and ``rolloutgym serve`` await what ``make_env`` returns, so a run of an env URL
    opens its members' sessions concurrently. Used any other way (an attribute, a call), it
    first opens the session with one blocking ``POST /sessions``, as ``AsyncRemoteEnv(url)``
    does, and then stands for that env.

    Args:
        url, task, token, timeout, kwargs: as for :class:`AsyncRemoteEnv`.
        opened: called with the env once open; what it returns is the env (e.g. tagging it).
    """

    def __init__(
        self,
        url: str,
        *,
        task: int | str | None = None,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        kwargs: dict[str, Any] | None = None,
        opened: Callable[[AsyncRemoteEnv], AsyncRemoteEnv] | None = None,
    ) -> None:
        parse_env_url(url)  # a bad URL fails here, not when first awaited
        self._url, self._task, self._token, self._timeout, self._kwargs = url, task, token, timeout, kwargs
        self._opened = opened
        self._env: AsyncRemoteEnv | None = None

    def __await__(self) -> Generator[Any, None, AsyncRemoteEnv]:
        return self._open().__await__()

    async def _open(self) -> AsyncRemoteEnv:
        if self._env is None:
            environment = await AsyncRemoteEnv.open(
                self._url, task=self._task, token=self._token, timeout=self._timeout, kwargs=self._kwargs
            )
            if self._env is not None:  # opened meanwhile by another awaiter: keep that one
                await environment.close()
            else:
                self._env = self._ready(environment)
        return self._env

    def _ready(self, environment: AsyncRemoteEnv) -> AsyncRemoteEnv:
        return self._opened(environment) if self._opened is not None else environment

    def _blocking(self) -> AsyncRemoteEnv:
        if self._env is None:
            self._env = self._ready(
                AsyncRemoteEnv(
                    self._url, task=self._task, token=self._token, timeout=self._timeout, kwargs=self._kwargs
                )
            )
        return self._env

    async def close(self) -> None:
        """Close the session; one that was never opened is not opened for it."""
        if self._env is not None:
            await self._env.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in {"_url", "_task", "_token", "_timeout", "_kwargs", "_opened", "_env"}:
            raise AttributeError(name)  # not set yet (copy, pickle): never open a session for these
        return getattr(self._blocking(), name)

    def __repr__(self) -> str:
        if self._env is not None:
            return repr(self._env)
        return f"<PendingRemoteEnv {self._url} task {self._task!r} (not open yet: await it)>"


# It stands for the AsyncRemoteEnv it opens: isinstance(pending, AsyncRemoteEnv) (and AsyncEnv) holds.
AsyncRemoteEnv.register(PendingRemoteEnv)
