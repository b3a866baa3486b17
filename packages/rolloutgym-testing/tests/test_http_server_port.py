"""The local test server can come back at the address it had (a model server that restarts)."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from rolloutgym_testing.http_server import LocalHTTPServer


async def _hello(method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    return 200, {"content-type": "text/plain"}, b"hello"


def test_a_stopped_server_restarts_on_the_same_port() -> None:
    first = LocalHTTPServer(_hello)
    first.start()
    port = first.port
    assert urllib.request.urlopen(f"{first.root}/", timeout=10).read() == b"hello"
    first.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10)
    second = LocalHTTPServer(_hello, port=port)
    second.start()
    try:
        assert second.port == port
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10).read() == b"hello"
    finally:
        second.stop()
