"""The server authorises the request the router matched, never a spelling of it (issue 50, class 2).

A real server process on a free loopback port; requests are written byte for byte on a
socket (an HTTP client would normalise the paths under test). Without the token only
``GET``/``HEAD /health`` spelled exactly so answers; every other spelling of it, and
every spelling of every other route (percent-encoded letters and slashes, double and
trailing slashes, dot segments, case, queries) answers 401. With the token, a spelling
answers what the decoded path routes to. Owners are a digest of the whole key; keyless
clients see no one's sessions; one owner cannot take every session of the server.
"""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest
from rolloutgym.serve import ServerProcess
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

ARITH = "toy/arith-v0"
TOKEN = "s3cret"
KEY = "x-rolloutgym-key"

# Spellings of the public route: each must be refused without the token (only "/health" itself is public).
HEALTH_SPELLINGS = [
    "/%68ealth",
    "/%68%65%61%6c%74%68",
    "/%68EALTH",
    "/HEALTH",
    "/Health",
    "/health/",
    "//health",
    "/health//",
    "/./health",
    "/x/../health",
    "/%2e/health",
    "/%2fhealth",
    "/%2Fhealth",
    "/health%00",
    "/health%20",
    "/health;x",
    "/health/.",
    "/health%2f",
    "/envs/../health",
    f"/{ARITH}/../../health",
]
# Spellings of token-only routes: never public, whatever they decode to.
GUARDED_SPELLINGS = [
    "/envs",
    "/%65nvs",
    "/envs/",
    "//envs",
    "/./envs",
    "/sessions",
    "/%73essions",
    "/metrics",
    "/%6detrics?format=json",
    f"/{ARITH}/health",
    f"/{ARITH}/%68ealth",
    "/toy%2Farith-v0/health",
    "/toy%2farith-v0/schema",
    f"/{ARITH}/schema",
    f"/{ARITH}/metadata",
    f"//{ARITH}/health",
    f"/{ARITH}//health",
    "/health/health",
    "/nope",
    "/",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/create_session",
    "/%63reate_session",
    "/create",
    "/ping",
    "/tools",
    f"/{ARITH}/tools",
    f"/{ARITH}/%74ools",
    f"/{ARITH}/call",
    f"/{ARITH}/tasks",
]


def _raw(base: str, method: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Send ``METHOD PATH`` exactly as written; the status and the body."""
    host, port = base.split("//", 1)[1].rsplit(":", 1)
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    with socket.create_connection((host, int(port)), timeout=60) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.fixture(scope="module")
def server() -> ServerProcess:
    with ServerProcess([ARITH], ["--token", TOKEN]) as process:
        yield process


def test_only_the_public_routes_own_spelling_answers_without_a_token(server: ServerProcess) -> None:
    base = server.base_url
    for method in ("GET", "HEAD"):
        for path in ("/health", "/health?x=1", "/health?token=nope"):
            assert _raw(base, method, path)[0] == 200, (method, path)
    for path in HEALTH_SPELLINGS + GUARDED_SPELLINGS:
        for method in ("GET", "HEAD", "POST", "DELETE", "OPTIONS", "PUT"):
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
                status, body = _raw(base, method, path, headers)
                assert status == 401, (method, path, headers, status, body)
                assert ARITH.encode() not in body
    assert _raw(base, "POST", "/health")[0] == 401  # the public route, another method


def test_with_the_token_a_spelling_answers_what_it_decodes_to(server: ServerProcess) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    base = server.base_url
    assert _raw(base, "GET", "/%68ealth", auth)[0] == 200
    assert json.loads(_raw(base, "GET", "/%65nvs", auth)[1]) == json.loads(_raw(base, "GET", "/envs", auth)[1])
    assert _raw(base, "GET", f"/{ARITH}/%68ealth", auth)[0] == 200
    for path in ("/health/", "//health", "/HEALTH", "/envs/"):  # no redirects: not routed is 404
        assert _raw(base, "GET", path, auth)[0] == 404, path


@pytest.mark.parametrize(
    "path", ["/ws", "/%77s", "/ws/", "//ws", f"/{ARITH}/ws", "/toy%2Farith-v0/ws", f"/{ARITH}/%77s", "/nope/ws"]
)
def test_every_websocket_spelling_needs_the_token(server: ServerProcess, path: str) -> None:
    url = server.base_url.replace("http", "ws") + path
    for headers in ({}, {"authorization": "Bearer wrong"}):
        with pytest.raises(InvalidStatus):
            asyncio.run(_ws_open(url, headers))
    if path in ("/ws", "/%77s", f"/{ARITH}/ws", f"/{ARITH}/%77s"):
        asyncio.run(_ws_open(url, {"authorization": f"Bearer {TOKEN}"}))  # routed: opens


async def _ws_open(url: str, headers: dict[str, str]) -> None:
    async with connect(url, additional_headers=headers, open_timeout=30):
        pass


def test_owners_digest_the_whole_key_and_keyless_clients_list_nothing() -> None:
    prefix = "k" * 256
    with ServerProcess([ARITH]) as server:
        base = server.base_url
        first = httpx.Client(base_url=base, headers={KEY: prefix + "-first"}, timeout=60)
        second = httpx.Client(base_url=base, headers={KEY: prefix + "-second"}, timeout=60)
        long_key = httpx.Client(base_url=base, headers={KEY: "z" * 4000}, timeout=60)
        session = first.post("/sessions", json={"env": ARITH}).json()["session"]
        assert second.get("/sessions").json()["sessions"] == []
        assert second.post(f"/sessions/{session}/reset", json={}).status_code == 404
        assert long_key.post("/sessions", json={"env": ARITH}).status_code == 200
        assert len(long_key.get("/sessions").json()["sessions"]) == 1
        # Keyless clients: no listing shows anyone's sessions, theirs included; a session is reached by its id.
        anonymous = [httpx.Client(base_url=base, timeout=60) for _ in range(2)]
        opened = anonymous[0].post("/sessions", json={"env": ARITH}).json()["session"]
        assert len(opened.split("-", 1)[1]) == 32  # 128 random bits
        for client in anonymous:
            assert client.get("/sessions").json()["sessions"] == []
        assert anonymous[0].post(f"/sessions/{opened}/reset", json={"seed": 0}).status_code == 200
        assert first.post(f"/sessions/{opened}/reset", json={}).status_code == 404  # a keyed client: not its
        assert [s["session"] for s in first.get("/sessions").json()["sessions"]] == [session]
        for client in (first, second, long_key, *anonymous):
            client.close()


def test_one_owner_cannot_take_every_session() -> None:
    with ServerProcess([ARITH], ["--max-sessions", "4"]) as server:  # default: 2 per owner
        base = server.base_url
        greedy = httpx.Client(base_url=base, headers={KEY: "greedy"}, timeout=60)
        assert [greedy.post("/sessions", json={"env": ARITH}).status_code for _ in range(3)] == [200, 200, 429]
        refused = greedy.post("/sessions", json={"env": ARITH}).json()["error"]["message"]
        assert "--max-sessions-per-owner" in refused
        other = httpx.Client(base_url=base, headers={KEY: "other"}, timeout=60)
        keyless = httpx.Client(base_url=base, timeout=60)
        assert other.post("/sessions", json={"env": ARITH}).status_code == 200
        assert keyless.post("/sessions", json={"env": ARITH}).status_code == 200
        assert keyless.post("/sessions", json={"env": ARITH}).status_code == 429  # the server is full now
        # Closing gives the quota back.
        owned = greedy.get("/sessions").json()["sessions"]
        assert greedy.delete(f"/sessions/{owned[0]['session']}").json() == {"closed": True}
        assert greedy.post("/sessions", json={"env": ARITH}).status_code == 200
        for client in (greedy, other, keyless):
            client.close()
    with ServerProcess([ARITH], ["--max-sessions", "4", "--max-sessions-per-owner", "4"]) as server:
        greedy = httpx.Client(base_url=server.base_url, headers={KEY: "greedy"}, timeout=60)
        assert [greedy.post("/sessions", json={"env": ARITH}).status_code for _ in range(5)] == [200] * 4 + [429]
        greedy.close()
