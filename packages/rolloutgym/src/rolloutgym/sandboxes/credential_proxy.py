"""An HTTP relay on a Unix socket that adds the host's credentials: sandboxed code reaches one API, never the key.

A platform worker running a pushed env file in the sandbox (:func:`~rolloutgym.sandboxes.run_isolated`)
still lets the run's policy call the model the operator configured (``OPENAI_BASE_URL`` and
``OPENAI_API_KEY``): the sandbox has no network, its ``127.0.0.1:PORT`` is relayed to this proxy's
socket (:attr:`Isolation.forward <rolloutgym.sandboxes.Isolation>`), and the proxy sends each request
to the one upstream it was made for, with the upstream's headers (the key) put in here. The sandbox
sees a base URL and a placeholder key; it cannot choose another host, read the key, or send a body
past ``max_body`` (413); a response is cut at ``max_response`` bytes (502).
"""

from __future__ import annotations

import http.client
import os
import socketserver
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from urllib.parse import urlsplit

__all__ = ["CredentialProxy"]

_PASSED = ("content-type", "accept", "user-agent", "openai-beta", "anthropic-version")


class _ProxySocketServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    proxy: CredentialProxy


class _Handler(BaseHTTPRequestHandler):
    server: _ProxySocketServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        return

    def address_string(self) -> str:
        return "sandbox"

    def _answer(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _relay(self) -> None:
        proxy = self.server.proxy
        length = self.headers.get("Content-Length")
        if self.command == "POST" and (length is None or not length.isdigit()):
            return self._answer(411, b'{"error": "send a Content-Length"}')
        size = int(length or 0)
        if size > proxy.max_body:
            return self._answer(413, b'{"error": "request body too large"}')
        body = self.rfile.read(size) if size else None
        headers = {name: value for name, value in self.headers.items() if name.lower() in _PASSED}
        headers.update(proxy.headers)
        try:
            response = proxy.send(self.command, self.path, body, headers)
        except (OSError, http.client.HTTPException) as error:
            return self._answer(502, f'{{"error": "upstream unreachable: {type(error).__name__}"}}'.encode())
        status, content_type, data = response
        self._answer(status, data, content_type)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self._relay()

    def do_GET(self) -> None:  # noqa: N802
        self._relay()


class CredentialProxy:
    """Relay HTTP requests from ``socket_path`` to ``upstream`` (a base URL) with ``headers`` added.

    Use as a context manager; the socket is made connectable by any uid (the sandbox's)."""

    def __init__(
        self,
        upstream: str,
        headers: Mapping[str, str],
        socket_path: str | os.PathLike[str],
        *,
        max_body: int = 32 << 20,
        max_response: int = 64 << 20,
        timeout: float = 600.0,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the proxy's upstream must be an http(s) URL, not {upstream!r}")
        self.scheme, self.host, self.port = parts.scheme, parts.hostname, parts.port
        self.base_path = parts.path.rstrip("/")
        self.headers = dict(headers)
        self.socket_path = os.fspath(socket_path)
        self.max_body, self.max_response, self.timeout = max_body, max_response, timeout
        self._server: _ProxySocketServer | None = None

    def send(self, method: str, path: str, body: bytes | None, headers: Mapping[str, str]) -> tuple[int, str, bytes]:
        """One request to the upstream: ``(status, content type, body)``."""
        if not path.startswith("/") or path.startswith("//"):
            return 400, "application/json", b'{"error": "a path on the model API, e.g. /chat/completions"}'
        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        connection = kind(self.host, self.port, timeout=self.timeout)
        try:
            connection.request(method, self.base_path + path, body=body, headers=dict(headers))
            response = connection.getresponse()
            data = response.read(self.max_response + 1)
            if len(data) > self.max_response:
                return 502, "application/json", b'{"error": "upstream response too large"}'
            return response.status, response.getheader("Content-Type", "application/json"), data
        finally:
            connection.close()

    def __enter__(self) -> CredentialProxy:
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        server = _ProxySocketServer(self.socket_path, _Handler)
        server.proxy = self
        os.chmod(self.socket_path, 0o666)
        threading.Thread(target=server.serve_forever, name="credential-proxy", daemon=True).start()
        self._server = server
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
