"""The clients' view of an endpoint that is not the API: a redirect or an HTML page is an authentication failure
(as the rollout SDK reports it), tested against a real local HTTP server on 127.0.0.1; credentials resolution."""

from __future__ import annotations

import asyncio
import json
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rolloutgym.platform import AsyncClient, AuthenticationError, Client, credentials


class _LoginWall(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        if self.path.startswith("/api/runs"):
            self.send_response(302)
            self.send_header("Location", "/login")
            self.end_headers()
            return
        body = b"<html><body>Sign in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def login_wall():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LoginWall)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_redirect_and_html_answers_are_authentication_failures(login_wall) -> None:
    with Client(login_wall, "rk_x") as client:
        with pytest.raises(AuthenticationError, match="redirected to /login"):
            client.list_runs()
        with pytest.raises(AuthenticationError, match="HTML page"):
            client.whoami()

    async def twin() -> None:
        async with AsyncClient(login_wall, "rk_x") as client:
            with pytest.raises(AuthenticationError, match="redirected"):
                await client.get_run("run_000000000000")

    asyncio.run(twin())


def test_credentials_file_per_endpoint_and_env_overrides(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("ROLLOUTGYM_API_KEY", raising=False)
    monkeypatch.delenv("ROLLOUTGYM_ENDPOINT", raising=False)
    with pytest.raises(AuthenticationError, match="rolloutgym login"):
        credentials.resolve()
    path = credentials.save("http://a.example:1/", "rk_a")
    credentials.save("http://b.example:2", "rk_b")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["endpoints"] == {
        "http://a.example:1": {"api_key": "rk_a"},
        "http://b.example:2": {"api_key": "rk_b"},
    }
    assert credentials.resolve() == ("http://b.example:2", "rk_b")  # the last login is the default
    assert credentials.resolve("http://a.example:1") == ("http://a.example:1", "rk_a")
    monkeypatch.setenv("ROLLOUTGYM_ENDPOINT", "http://a.example:1")
    assert credentials.resolve() == ("http://a.example:1", "rk_a")
    monkeypatch.setenv("ROLLOUTGYM_API_KEY", "rk_env")
    assert credentials.resolve() == ("http://a.example:1", "rk_env")
    assert credentials.resolve(api_key="rk_arg") == ("http://a.example:1", "rk_arg")
