"""The openai adapter's HTTP transport: :class:`~rolloutgym.llm.http.JSONClient` over ``aiohttp``.

Retries, backoff, timeouts, the concurrency limit and every error message are
``JSONClient``'s; only one attempt goes through ``aiohttp`` (its HTTP parser and connection
pool are written in C and cost about a fifth of the CPU of httpx's per request; see
``benchmarks/openai_e2e.py``). One ``aiohttp.ClientSession`` per event loop holds all
``max_concurrency`` connections.

What users set keeps working: ``base_url``, the API key and extra headers (sent with every
request), the timeout (for connecting and for each wait on the server's answer, as httpx's
timeout was), and the proxy environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``,
credentials in the proxy URL included), read when a client is made, as httpx did (aiohttp's
own ``trust_env`` would look the proxy and ``~/.netrc`` up in a worker thread on every
request: two thread hops, about a fifth of this transport's CPU). ``https`` servers are
verified against certifi's CA bundle.
"""

from __future__ import annotations

import base64
import urllib.request
from collections.abc import Mapping
from typing import Any

import aiohttp
import yarl
from rolloutgym.llm.http import JSONClient, TransportFailed

__all__ = ["AiohttpJSONClient", "env_proxy"]


def env_proxy(url: str) -> dict[str, Any]:
    """The ``proxy`` (and ``proxy_headers``) request options the environment asks for ``url``."""
    target = yarl.URL(url)
    if target.host is not None and urllib.request.proxy_bypass(target.host):
        return {}
    raw = urllib.request.getproxies().get(target.scheme)
    if not raw:
        return {}
    proxy = yarl.URL(raw)
    if proxy.user is None:
        return {"proxy": proxy}
    credentials = base64.b64encode(f"{proxy.user}:{proxy.password or ''}".encode()).decode("ascii")
    # aiohttp turns a proxy "Authorization" into Proxy-Authorization, on the request (http
    # servers) or on the CONNECT (https servers).
    return {"proxy": proxy.with_user(None), "proxy_headers": {"Authorization": f"Basic {credentials}"}}


class AiohttpJSONClient(JSONClient):
    """:class:`~rolloutgym.llm.http.JSONClient` sending through one ``aiohttp`` session per event loop."""

    connections_per_client = 1 << 30  # aiohttp's pool does not scan: one session holds every connection
    _options: dict[str, Any]  # the proxy options, set by _make_client (which runs before any _send)

    def _timeout(self, seconds: float | None) -> aiohttp.ClientTimeout:
        return aiohttp.ClientTimeout(total=None, connect=seconds, sock_read=seconds)

    def _make_client(self) -> aiohttp.ClientSession:
        self._options = env_proxy(self.base_url)
        connector = aiohttp.TCPConnector(limit=self.max_concurrency, ssl=self.ssl_context() or True)
        return aiohttp.ClientSession(connector=connector, headers=self._headers, timeout=self._timeout(self.timeout))

    async def _close_client(self, client: aiohttp.ClientSession) -> None:
        await client.close()

    async def _send(
        self, client: aiohttp.ClientSession, url: str, payload: bytes, timeout: float | None
    ) -> tuple[int, Mapping[str, str], bytes]:
        options = self._options if timeout == self.timeout else {**self._options, "timeout": self._timeout(timeout)}
        try:
            async with client.post(url, data=payload, **options) as response:
                return response.status, response.headers, await response.read()
        except TimeoutError:  # before ClientError: aiohttp's timeouts are both
            raise
        except aiohttp.ClientError as exc:
            raise TransportFailed(f"{type(exc).__name__}: {exc or 'closed by the server'}") from None
