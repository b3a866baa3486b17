"""The adapter's HTTP transport (aiohttp) against a REAL recording HTTP server on 127.0.0.1.

The server is the standard library's ``ThreadingHTTPServer``: it records each request's
request line, headers and body and answers a fixed chat completion, so the tests see what
goes over the wire (headers, the API key, proxy requests, the body's bytes). No network, no
API key, no mocks of our own code.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import yarl
from rolloutgym.registry import get_registry
from rolloutgym.rollouts import arollout
from rolloutgym_openai import make_policy
from rolloutgym_openai._http import env_proxy
from rolloutgym_protocol import Trajectory

ANSWER = {
    "id": "r1",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
}
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy")


class Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *, drop_first: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[dict[str, Any]] = []
        self.drop_first = drop_first

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append({"line": self.requestline, "headers": dict(self.headers), "body": body})
        if len(self.server.seen) <= self.server.drop_first:
            self.close_connection = True  # hang up without an answer: a transport failure
            return
        payload = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder(request: pytest.FixtureRequest) -> Iterator[Recorder]:
    server = Recorder(drop_first=getattr(request, "param", 0))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def play(policy: Any) -> Trajectory:
    async def go() -> Trajectory:
        environment = get_registry().make("toy/arith-v0", task=0)
        try:
            return await arollout(environment, policy, seed=0, max_steps=2)
        finally:
            environment.close()

    return asyncio.run(go())


def test_key_headers_and_body_go_over_the_wire(recorder: Recorder, no_proxy_env: pytest.MonkeyPatch) -> None:
    policy = make_policy(
        "m", base_url=recorder.root + "/v1", api_key="sk-test", headers={"X-Team": "rl"}, extra_body={"note": "é✓"}
    )
    trajectory = play(policy)
    assert trajectory.steps[0].policy_info["usage"] == {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    (request,) = recorder.seen
    headers = {key.lower(): value for key, value in request["headers"].items()}
    assert request["line"] == "POST /v1/chat/completions HTTP/1.1"
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["x-team"] == "rl"
    assert headers["content-type"] == "application/json"
    body = json.loads(request["body"].decode("utf-8"))
    assert body["model"] == "m" and body["note"] == "é✓"
    assert [message["role"] for message in body["messages"]][-1] == "user"


@pytest.mark.parametrize("recorder", [1], indirect=True)
def test_a_dropped_connection_is_retried(recorder: Recorder, no_proxy_env: pytest.MonkeyPatch) -> None:
    policy = make_policy("m", base_url=recorder.root + "/v1", max_retries=1, timeout=10)
    trajectory = play(policy)
    assert trajectory.steps[0].action == "42"
    assert len(recorder.seen) == 2


def test_the_proxy_environment_is_honoured(recorder: Recorder, no_proxy_env: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY with credentials: the proxy gets the absolute URL and Proxy-Authorization."""
    no_proxy_env.setenv("HTTP_PROXY", f"http://user:pa%20ss@127.0.0.1:{recorder.server_address[1]}")
    policy = make_policy("m", base_url="http://model.invalid:8000/v1", max_retries=0, timeout=10)
    trajectory = play(policy)
    assert trajectory.steps[0].action == "42"
    (request,) = recorder.seen
    assert request["line"] == "POST http://model.invalid:8000/v1/chat/completions HTTP/1.1"
    expected = "Basic " + base64.b64encode(b"user:pa ss").decode()
    assert {key.lower(): value for key, value in request["headers"].items()}["proxy-authorization"] == expected


def test_no_proxy_bypasses_the_proxy(recorder: Recorder, no_proxy_env: pytest.MonkeyPatch) -> None:
    no_proxy_env.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    no_proxy_env.setenv("NO_PROXY", "127.0.0.1,localhost")
    policy = make_policy("m", base_url=recorder.root + "/v1", max_retries=0, timeout=10)
    assert play(policy).steps[0].action == "42"
    assert recorder.seen[0]["line"] == "POST /v1/chat/completions HTTP/1.1"


def test_env_proxy_per_scheme(no_proxy_env: pytest.MonkeyPatch) -> None:
    no_proxy_env.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert env_proxy("http://server.internal/v1") == {}
    assert env_proxy("https://api.example.com/v1") == {"proxy": yarl.URL("http://proxy.internal:3128")}
    no_proxy_env.setenv("HTTPS_PROXY", "http://u:p@proxy.internal:3128")
    secret = "Basic " + base64.b64encode(b"u:p").decode()
    assert env_proxy("https://api.example.com/v1")["proxy_headers"] == {"Authorization": secret}
