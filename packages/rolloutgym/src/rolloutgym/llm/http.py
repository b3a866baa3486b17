"""JSON over HTTP for model servers: retries with backoff, timeouts, a concurrency limit.

Shared by the policy adapters that talk to OpenAI-compatible servers (``rolloutgym-openai``,
``rolloutgym-vllm``). The retries, timeouts, concurrency limit and error messages live in
:class:`JSONClient`; one attempt goes through its transport methods (``_make_client``,
``_send``, ``_close_client``), which use ``httpx`` (a dependency of those plugins); a
subclass may send through another HTTP client (``rolloutgym-openai`` uses ``aiohttp``).
Request bodies are serialised once per request (not once per attempt) with
``pydantic_core``, answers parsed with it.

One client and one semaphore exist per running event loop (a sync rollout runs each step
in its own ``asyncio.run``; a client or semaphore cannot cross loops). They are closed
when the loop shuts its async generators down, which ``asyncio.run`` does.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import ssl
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import certifi
import pydantic_core
from rolloutgym_protocol.errors import PolicyError

__all__ = ["JSONClient", "RetrySettings", "ServerRefused", "TransportFailed"]

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class TransportFailed(Exception):
    """Raised by a transport's ``_send`` when the request got no HTTP answer (not a timeout)."""


class ServerRefused(PolicyError):
    """The server answered a status that retrying cannot fix (a 4xx other than 408/409/425/429).

    Attributes:
        status: the HTTP status.
        server_message: the server's own error message.
    """

    def __init__(self, message: str, *, status: int, server_message: str) -> None:
        super().__init__(message)
        self.status = status
        self.server_message = server_message


@dataclass(frozen=True)
class RetrySettings:
    """When and how long to retry.

    Attributes:
        max_retries: retries after the first attempt (``0``: never retry).
        initial_delay: the first backoff in seconds; it doubles per retry (full jitter).
        max_delay: the longest backoff in seconds.
        max_retry_after: the longest server-requested wait (``Retry-After``) honoured.
    """

    max_retries: int = 4
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based), with full jitter."""
        ceiling = min(self.max_delay, self.initial_delay * (2**attempt))
        return random.uniform(ceiling / 2, ceiling)

    def server_delay(self, headers: Mapping[str, str]) -> float | None:
        """The wait the server asked for (``retry-after-ms`` or ``Retry-After``), if usable."""
        raw_ms = headers.get("retry-after-ms")
        if raw_ms is not None:
            try:
                return min(float(raw_ms) / 1000.0, self.max_retry_after)
            except ValueError:
                pass
        raw = headers.get("retry-after")
        if raw is None:
            return None
        try:
            seconds = float(raw)
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(raw) if raw else None
            if parsed is None:
                return None
            seconds = parsed.timestamp() - time.time()
        return min(max(seconds, 0.0), self.max_retry_after)


_CONNECTIONS_PER_CLIENT = 8


class _LoopResources:
    """The clients and the semaphore of one event loop.

    Connections may be spread over several small pools (``connections_per_client``):
    httpcore scans its whole pool for every request, which costs quadratic time with dozens
    of requests in flight.
    """

    def __init__(self, owner: JSONClient, connections: int) -> None:
        self._owner = owner
        self.semaphore = asyncio.Semaphore(connections)
        self.clients: list[Any] = [None] * max(1, -(-connections // owner.connections_per_client))
        self._next = 0

    def client(self) -> Any:
        index = self._next
        self._next = (index + 1) % len(self.clients)
        client = self.clients[index]
        if client is None:
            client = self.clients[index] = self._owner._make_client()
        return client

    async def aclose(self) -> None:
        for client in self.clients:
            if client is not None:
                await self._owner._close_client(client)


async def _keep_until_loop_shutdown(resources: _LoopResources) -> AsyncIterator[_LoopResources]:
    # Suspended at the yield for the loop's lifetime; asyncio.run's shutdown_asyncgens()
    # resumes it with aclose(), which closes the clients on their own loop.
    try:
        yield resources
    finally:
        await resources.aclose()


def _error_message(content: bytes) -> str:
    text = content.decode("utf-8", errors="replace")
    try:
        body = pydantic_core.from_json(content)
    except ValueError:
        return text[:300].strip() or "(empty body)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:500]
    if isinstance(error, str):
        return error[:500]
    if isinstance(body, dict) and body.get("detail"):
        return str(body["detail"])[:500]
    return text[:300]


class JSONClient:
    """POSTs JSON to one server with retries, a timeout and at most ``max_concurrency`` requests in flight.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: sent as ``Authorization: Bearer``; None sends no header.
        timeout: seconds for one attempt (connect, write, read); None waits forever.
        max_concurrency: requests in flight at once, per event loop.
        retry: :class:`RetrySettings`.
        headers: extra request headers.
        service: how errors name the server ("OpenAI-compatible server", "vLLM server").
        key_hint: what to do when the server refuses the key (HTTP 401).

    Subclasses that send through another HTTP library override ``_make_client``,
    ``_send``, ``_close_client`` and :attr:`connections_per_client`.
    """

    #: connections per client object (httpx: small pools, see ``_LoopResources``).
    connections_per_client: int = _CONNECTIONS_PER_CLIENT

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float | None = 120.0,
        max_concurrency: int = 32,
        retry: RetrySettings | None = None,
        headers: Mapping[str, str] | None = None,
        service: str = "OpenAI-compatible server",
        key_hint: str = "set OPENAI_API_KEY or pass --policy-arg api_key=KEY",
    ) -> None:
        if max_concurrency < 1:
            raise PolicyError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if timeout is not None and timeout <= 0:
            raise PolicyError(f"timeout must be a positive number of seconds, got {timeout}")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.retry = retry or RetrySettings()
        self.service = service
        self.key_hint = key_hint
        self._headers = {"Content-Type": "application/json", **dict(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._ssl_context: ssl.SSLContext | None = None
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[_LoopResources, Any]] = (
            weakref.WeakKeyDictionary()
        )

    async def _resources(self) -> _LoopResources:
        loop = asyncio.get_running_loop()
        entry = self._by_loop.get(loop)
        if entry is None:
            # The keeper references its loop, so entries of finished loops are purged by hand.
            for finished in [known for known in self._by_loop if known.is_closed()]:
                del self._by_loop[finished]
            resources = _LoopResources(self, self.max_concurrency)
            keeper = _keep_until_loop_shutdown(resources)
            await keeper.__anext__()
            entry = (resources, keeper)
            self._by_loop[loop] = entry
        return entry[0]

    def ssl_context(self) -> ssl.SSLContext | None:
        """certifi's CA bundle for an ``https`` server (loaded once: ~0.1 s), else None."""
        if self._ssl_context is None and self.base_url.startswith("https:"):
            self._ssl_context = ssl.create_default_context(cafile=certifi.where())
        return self._ssl_context

    def _make_client(self) -> Any:
        """A new HTTP client for the running event loop (httpx here)."""
        import httpx

        per_client = min(self.max_concurrency, self.connections_per_client)
        limits = httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client)
        return httpx.AsyncClient(
            timeout=self.timeout, limits=limits, headers=self._headers, verify=self.ssl_context() or False
        )

    async def _close_client(self, client: Any) -> None:
        await client.aclose()

    async def _send(
        self, client: Any, url: str, payload: bytes, timeout: float | None
    ) -> tuple[int, Mapping[str, str], bytes]:
        """One attempt: ``(status, headers, body)``.

        Raises:
            TimeoutError: no answer within ``timeout``.
            TransportFailed: no HTTP answer (connection refused or dropped, broken HTTP).
        """
        import httpx

        try:
            if timeout == self.timeout:
                response = await client.post(url, content=payload)
            else:
                response = await client.post(url, content=payload, timeout=timeout)
        except httpx.TimeoutException:
            raise TimeoutError from None
        except httpx.TransportError as exc:
            raise TransportFailed(f"{type(exc).__name__}: {exc or 'closed by the server'}") from None
        return response.status_code, response.headers, response.content

    async def aclose(self) -> None:
        """Close this loop's connections now (they are also closed when the loop ends)."""
        entry = self._by_loop.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()

    async def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``base_url + path`` and return the JSON object answered.

        Retries connection errors, timeouts and statuses 408/409/425/429/5xx with
        exponential backoff (or the server's ``Retry-After``). A timed-out attempt's
        connection is dropped (the server may still be working on it: a single-slot server
        then finishes it before the retry), and each retry after a timeout waits longer
        for its answer (the timeout doubles, up to 4x), so retries do not pile up behind a
        slow server.

        Raises:
            ServerRefused: the server refused the request (a 4xx that retrying cannot fix).
            PolicyError: the server is unreachable, keeps failing, or answers something
                that is not a JSON object.
        """
        resources = await self._resources()
        url = self.base_url + path
        payload = self._encode(body, url)
        attempts = self.retry.max_retries + 1
        last_problem = ""
        attempt_timeout = self.timeout
        for attempt in range(attempts):
            delay: float | None = None
            async with resources.semaphore:
                try:
                    status, headers, content = await self._send(resources.client(), url, payload, attempt_timeout)
                except TimeoutError:
                    last_problem = f"no answer within the {self.timeout:g} s timeout"
                    if attempt_timeout != self.timeout:
                        last_problem += f" (the last retry waited {attempt_timeout:g} s)"
                    if attempt_timeout is not None and self.timeout is not None:
                        attempt_timeout = min(attempt_timeout * 2, self.timeout * 4)
                except TransportFailed as exc:
                    last_problem = f"connection failed ({exc})"
                else:
                    if status == 200:
                        return self._json(content, url)
                    message = _error_message(content)
                    if status not in RETRY_STATUSES:
                        raise ServerRefused(
                            self._refusal(status, message, url), status=status, server_message=message
                        ) from None
                    last_problem = f"HTTP {status}: {message}"
                    delay = self.retry.server_delay(headers)
            if attempt + 1 < attempts:
                await asyncio.sleep(self.retry.backoff(attempt) if delay is None else delay)
        raise PolicyError(
            f"{self.service} at {self.base_url} failed after {attempts} attempt(s): {last_problem}. "
            "Check that the server is running and reachable (e.g. 'curl "
            f"{self.base_url}/models'), or raise --policy-arg timeout=SECONDS / max_retries=N."
        )

    def _encode(self, body: Mapping[str, Any], url: str) -> bytes:
        try:
            return pydantic_core.to_json(body)
        except ValueError as exc:
            raise PolicyError(f"the request to {url} cannot be sent as JSON: {exc}") from None

    def _json(self, content: bytes, url: str) -> dict[str, Any]:
        try:
            data = pydantic_core.from_json(content)
        except ValueError:
            text = content[:200].decode("utf-8", errors="replace")
            raise PolicyError(
                f"{self.service} at {url} answered HTTP 200 with a body that is not JSON: {text!r}"
            ) from None
        if not isinstance(data, dict):
            raise PolicyError(f"{self.service} at {url} answered a JSON {type(data).__name__}, expected an object")
        return data

    def _refusal(self, status: int, message: str, url: str) -> str:
        hint = {
            400: "the server rejected the request; check the model supports the options sent (tools, logprobs)",
            401: f"the API key was refused; {self.key_hint}",
            403: "the API key may not use this model or endpoint",
            404: "no such model or endpoint; check the model name and that --base-url ends with '/v1'",
            413: "the request is too large; lower max_tokens or shorten the episode",
            422: "the server rejected the request body; check the options passed with --policy-arg",
        }.get(status, "see the server's message")
        return f"{self.service} at {url} answered HTTP {status}: {message} ({hint})"
