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
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Generator
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import gymnasium as gym
from rolloutgym_protocol import AsyncEnv
from rolloutgym_protocol.errors import EnvClosedError
from rolloutgym_protocol.specs import is_env_url

from ._codec import decode_info, decode_space, decode_value, loads
from ._errors import RemoteEnvError, error_from_body

__all__ = [
    "AsyncRemoteEnv",
    "PendingRemoteEnv",
    "RemoteEnv",
    "env_info",
    "env_tasks",
    "is_env_url",
    "make_remote",
    "open_session",
    "parse_env_url",
]

TOKEN_VARIABLE = "ROLLOUTGYM_SERVE_TOKEN"
KEY_VARIABLE = "ROLLOUTGYM_SERVE_KEY"
KEY_HEADER = "x-rolloutgym-key"
# The client key of this process: with the token, it names the owner of the sessions this
# process opens, so other clients of the same token cannot list or step them.
_PROCESS_KEY = secrets.token_hex(16)
_NOTHING = object()  # no prefetched oracle action
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
        response = httpx.get(f"{base}/envs/{quote(env_id)}", headers=_headers(token), timeout=timeout)
    except httpx.TransportError as exc:
        raise _unreachable(base, exc) from None
    return _answer(response)  # type: ignore[no-any-return]


def env_tasks(url: str, *, token: str | None = None, timeout: float = 30.0) -> list[dict[str, Any]]:
    """The served env's tasks: ``[{"index", "id", "split", "item"?}]``."""
    import httpx

    base, env_id = parse_env_url(url)
    try:
        response = httpx.get(f"{base}/envs/{quote(env_id)}/tasks", headers=_headers(token), timeout=timeout)
    except httpx.TransportError as exc:
        raise _unreachable(base, exc) from None
    return _answer(response)["tasks"]  # type: ignore[no-any-return]


class _Described:
    """Attributes both clients take from the session's description."""

    _description: dict[str, Any]

    def _describe(self, description: dict[str, Any]) -> None:
        self._description = description
        self.session_id = description["session"]
        self.observation_space = decode_space(description["observation_space"])
        self.action_space = decode_space(description["action_space"])
        if description.get("tools") is not None:
            self.tools = description["tools"]
        metadata = dict(description.get("metadata") or {})
        metadata["nonblocking"] = False  # every call is network I/O
        self.metadata = metadata
        self.rolloutgym_env_id = description["env_id"]
        self.rolloutgym_task_id = description["task_id"]
        self.next_stop_strings: tuple[str, ...] = ()
        self._closed = False
        # Oracle prefetch: once a client asked for oracle_action(), reset/step answers bring
        # the next one along (the server computes it right after the step, where the next
        # oracle_action() call would); it stops when one goes unused.
        self._prefetch_oracle = False
        self._oracle_next: Any = _NOTHING

    def _prefetching(self, body: dict[str, Any]) -> dict[str, Any]:
        if self._oracle_next is not _NOTHING:  # the last prefetched action went unused: stop asking
            self._prefetch_oracle = False
            self._oracle_next = _NOTHING
        if self._prefetch_oracle:
            body["prefetch"] = ["oracle_action"]
        return body

    def _prefetched(self) -> Any:
        """The prefetched oracle action (once), or ``_NOTHING``; a miss turns prefetching on."""
        value, self._oracle_next = self._oracle_next, _NOTHING
        if value is _NOTHING:
            self._prefetch_oracle = True
        return value

    def _finish(self, description: dict[str, Any]) -> None:
        self._describe(description)
        # Only the protocol methods the served env has (the oracle policy checks for them).
        if "oracle_action" in description["methods"]:
            self.oracle_action = self._oracle_action  # type: ignore[attr-defined]
        if "null_action" in description["methods"]:
            self.null_action = lambda: self._call("null_action")  # type: ignore[attr-defined]

    def _observe(self, result: dict[str, Any]) -> None:
        self.next_stop_strings = tuple(result.get("next_stop_strings") or ())
        if "oracle_action" in result:
            self._oracle_next = result["oracle_action"]
        # The served env's tools or spaces changed during the episode (they come only when they did).
        if "tools" in result:
            self.tools = result["tools"]
        if "action_space" in result:
            self.action_space = decode_space(result["action_space"])
        if "observation_space" in result:
            self.observation_space = decode_space(result["observation_space"])

    def _reset_result(self, result: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        self._observe(result)
        return decode_value(self.observation_space, result["observation"]), decode_info(
            result["info"], result.get("score_object", False)
        )

    def _step_result(self, result: dict[str, Any]) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._observe(result)
        return (
            decode_value(self.observation_space, result["observation"]),
            float(result["reward"]),
            bool(result["terminated"]),
            bool(result["truncated"]),
            decode_info(result["info"], result.get("score_object", False)),
        )

    def __str__(self) -> str:
        return self.__repr__()

    def __repr__(self) -> str:
        base_url = self.base_url  # type: ignore[attr-defined]
        return (
            f"<{type(self).__name__} {self.rolloutgym_env_id} task {self.rolloutgym_task_id} at {base_url} "
            f"session {self.session_id}>"
        )


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
        self._client = httpx.Client(base_url=self.base_url, headers=self._headers, timeout=timeout)

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
        )
    except httpx.TransportError as exc:
        raise _unreachable(base, exc) from None
    return _answer(response)  # type: ignore[no-any-return]


def make_remote(
    url: str,
    *,
    task: int | str | None = None,
    token: str | None = None,
    kwargs: dict[str, Any] | None = None,
    asynchronous: bool | None = None,
) -> RemoteEnv | AsyncRemoteEnv:
    """What ``rolloutgym.make(URL)`` returns: like the served env, a sync ``RemoteEnv`` for a
    sync env and an ``AsyncRemoteEnv`` for an async one (``asynchronous=True``: always async)."""
    if task is not None and (isinstance(task, bool) or not isinstance(task, (int, str))):
        raise TypeError(
            f"a remote env takes a task index or a task id, got {type(task).__name__}; the server holds the task items"
        )
    description = open_session(url, task=task, token=token, kwargs=kwargs)
    if asynchronous or (asynchronous is None and description.get("async")):
        return AsyncRemoteEnv.adopt(url, description, token=token)
    return RemoteEnv.adopt(url, description, token=token)


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
            self._client = httpx.AsyncClient(base_url=self.base_url, headers=self._headers, timeout=self._timeout)
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

    async def _ws(self, message: dict[str, Any]) -> Any:
        """One request on this loop's shared WebSocket to the server (see ``_channel.py``)."""
        if self._socket is None:
            from ._channel import acquire_channel

            url = self.base_url.replace("http", "ws", 1) + "/ws"
            self._socket = await acquire_channel(url, self._headers, self._timeout)
            if self._attach:
                self._attach = False
                _ws_reply(await self._socket.request({"op": "attach", "session": self.session_id}))
        if message.get("op") != "open":
            message["session"] = self.session_id
        return _ws_reply(await self._socket.request(message))

    async def _request(self, operation: str, body: dict[str, Any]) -> Any:
        if self._closed:
            raise EnvClosedError(f"{self!r} is closed; open a new env")
        if self.transport == "ws":
            return await self._ws({"op": operation, **body})
        return await self._http("POST", f"/sessions/{self.session_id}/{operation}", body)

    async def _call(self, method: str) -> Any:
        return (await self._request("call", {"method": method}))["result"]

    async def _oracle_action(self) -> Any:
        value = self._prefetched()
        return await self._call("oracle_action") if value is _NOTHING else value

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        body = self._prefetching({"seed": seed, "options": options})
        return self._reset_result(await self._request("reset", body))

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        from ._codec import encode_value

        return self._step_result(await self._request("step", self._prefetching({"action": encode_value(action)})))

    async def close(self) -> None:
        if getattr(self, "_closed", True):
            await self._release()
            return
        self._closed = True
        try:
            if self.transport == "ws" and (self._socket is not None or self._attach):
                if self._socket is not None:
                    await self._ws({"op": "close"})
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

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in {"_url", "_task", "_token", "_timeout", "_kwargs", "_opened", "_env"}:
            raise AttributeError(name)  # not set yet (copy, pickle): never open a session for these
        return getattr(self._blocking(), name)

    def __repr__(self) -> str:
        if self._env is not None:
            return repr(self._env)
        return f"<PendingRemoteEnv {self._url} task {self._task!r} (not open yet: await it)>"
