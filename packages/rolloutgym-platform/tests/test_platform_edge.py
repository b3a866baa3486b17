"""The platform API's edge, on a real platform (SQLite) over 127.0.0.1: every identifier and query value is
checked before use (4xx with a message, never a 500, nothing queued), a body is limited before it is read, and
authentication comes before any body is read.

The body tests speak HTTP over a plain socket, so a test decides how much of a body is sent, and measure the
API process's resident memory (``/proc/PID/status``) before and after: an oversized body must not grow it by
anything near its size.
"""

from __future__ import annotations

import json
import select
import socket
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest

from .conftest import start_server

MiB = 1 << 20

SLUGS = [
    "..",
    ".",
    "../../etc",
    "a/../../b",
    "a/./b",
    "a//b",
    "/abs/path",
    "./relative",
    "a/",
    "x" * 5000,
    "<script>alert(1)</script>",
    "a\nb",
    "a\rb",
    "a\x00b",
    "a b",
    "ａｂｃ",  # full-width letters
    "abc\u202edcba",  # right-to-left override
    "a\u200bb",  # zero-width space
    "é",
    "",
    42,
    ["a"],
    {"a": 1},
]

FILE_NAMES = [
    "a\x00b.json",
    "../x.json",
    "/abs.json",
    "a/b.json",
    "a\\b.json",
    ".hidden.json",
    "x\n.json",
    "",
    "x" * 300,
]

QUERIES = [
    "/api/runs?limit=abc",
    "/api/runs?limit=nan",
    "/api/runs?limit=1e30",
    "/api/runs?limit=-1",
    "/api/runs?limit=0",
    "/api/runs?limit=99999999999999999999999",
    "/api/runs?limit=",
    "/api/runs?limit=1.5",
    "/api/runs?env=..",
    "/api/runs?env=%00",
    "/api/runs?env=" + "x" * 5000,
    "/api/runs/RUN/passing?threshold=nan",
    "/api/runs/RUN/passing?threshold=inf",
    "/api/runs/RUN/passing?threshold=abc",
    "/api/runs/RUN/passing?threshold=1e400",
    "/api/runs/RUN/wait?timeout=nan",
    "/api/runs/RUN/wait?timeout=-inf",
    "/api/runs/RUN/wait?timeout=abc",
    "/api/runs/RUN/wait?done=abc",
    "/api/runs/RUN/wait?done=1e30",
    "/api/runs/RUN/wait?done=-1",
    "/api/runs/RUN/wait?state=%00",
    "/api/runs/RUN/wait?until=never",
    "/api/runs/..",
    "/api/runs/" + "a" * 5000,
    "/api/runs/%00",
    "/api/runs/run_%3Cscript%3E",
    "/api/runs/run_0123456789AB",
    "/api/runs/job_0123456789ab",
    "/api/runs/..%2F..%2Fetc/file",
    "/api/runs/%2E%2E/passing",
    "/api/runs/run_0123456789ab%0A/wait",
    "/api/jobs/..",
    "/api/jobs/%00",
    "/api/jobs/" + "b" * 5000,
    "/api/jobs/job_x/wait",
    "/api/envs/..",
    "/api/envs/%2E%2E",
    "/api/envs/a/../../b",
    "/api/envs/%00",
    "/api/envs/" + "c" * 5000,
    "/api/envs/%3Cscript%3E",
]

RUN_BODIES = [
    {"n": 1e30},
    {"n": "5"},
    {"n": -1},
    {"n": 0},
    {"n": 10**9},
    {"n": True},
    {"n": None, "limit": "abc"},
    {"limit": 1e30},
    {"limit": 10**9},
    {"limit": -5},
    {"limit": float("nan")},
    {"concurrency": 10**9},
    {"concurrency": 0},
    {"timeout": float("nan")},
    {"timeout": float("inf")},
    {"timeout": -1},
    {"max_steps": 10**12},
    {"seed": "x"},
    {"seed": 10**30},
    {"split": "a\nb"},
    {"split": ["train"]},
    {"tasks": "0"},
    {"tasks": [{"a": 1}]},
    {"tasks": ["x" * 1000]},
    {"pass_threshold": float("nan")},
    {"policy_options": "temperature=1"},
    {"policy_options": {"temperature": float("nan")}},
    {"policy_options": {"temperature": [[1]]}},
    {"policy_options": {f"k{i}": 1 for i in range(100)}},
    {"env_slug": ".."},
    {"env_slug": "x" * 5000},
    {"env_slug": ["toy/arith-v0"]},
    {"model": 5},
    {"model": ["oracle"]},
    {"model": "x" * 5000},
]

RAW_BODIES = [b"not json", b"[1, 2]", b'"a string"', b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000, b""]


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def edge_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("edge") / "data"
    from rolloutgym_platform import db

    sessions = db.open_database(data)
    keys = {
        "all": db.create_key(sessions, name="all", scopes=["run", "push", "train"], org="acme"),
        "run_only": db.create_key(sessions, name="runner", scopes=["run"], org="acme"),
    }
    sessions.kw["bind"].dispose()
    server = start_server(data, workers=1)
    server.keys = keys
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {keys['all']}"}, timeout=60) as client:
        assert client.post("/api/envs", json={"kind": "id", "id": "toy/arith-v0"}).status_code in (200, 201)
        run = client.post("/api/runs", json={"env_slug": "toy/arith-v0", "model": "oracle", "limit": 1}).json()
        while client.get(f"/api/runs/{run['id']}").json()["state"] in ("queued", "running"):
            time.sleep(0.2)
    server.run_id = run["id"]
    yield server
    server.stop()


@pytest.fixture
def api(edge_server):
    with httpx.Client(
        base_url=edge_server.url, headers={"Authorization": f"Bearer {edge_server.keys['all']}"}, timeout=60
    ) as client:
        yield client


def _refused(answer: httpx.Response, what: object, statuses: tuple[int, ...] = (400, 404)) -> None:
    assert answer.status_code in statuses, (str(what)[:80], answer.status_code, answer.text[:200])
    assert answer.json()["error"], answer.text


def test_slugs_and_file_names_are_checked_at_the_edge(api, edge_server) -> None:
    import base64

    before = api.get("/api/envs").json()
    content = base64.b64encode(b'{"slug": "x"}').decode()
    for slug in SLUGS:
        if slug:  # an empty slug is no slug: the env file's own is used
            _refused(api.post("/api/envs", json={"kind": "id", "id": "toy/arith-v0", "slug": slug}), slug, (400,))
            body = {"kind": "file", "main": "env.json", "slug": slug, "files": {"env.json": content}}
            _refused(api.post("/api/envs", json=body), slug, (400,))
        _refused(api.post("/api/envs", json={"kind": "id", "id": slug}), slug, (400,))
        declared = {
            "kind": "file",
            "main": "env.json",
            "files": {"env.json": base64.b64encode(json.dumps({"slug": slug}).encode()).decode()},
        }
        if isinstance(slug, str) and slug:  # a slug the file declares (another JSON kind is no slug)
            _refused(api.post("/api/envs", json=declared), slug, (400,))
        _refused(api.post("/api/runs", json={"env_slug": slug, "model": "oracle"}), slug, (400,))
    for name in FILE_NAMES:
        body = {"kind": "file", "main": name, "slug": "named", "files": {name: content}}
        _refused(api.post("/api/envs", json=body), name, (400,))
        body = {"kind": "file", "main": "env.json", "slug": "named", "files": {"env.json": content, name: content}}
        _refused(api.post("/api/envs", json=body), name, (400,))
    for files in ({"env.json": "!!! not base64"}, {"env.json": 5}, ["env.json"], "env.json"):
        _refused(api.post("/api/envs", json={"kind": "file", "main": "env.json", "files": files}), files, (400,))
    assert api.get("/api/envs").json() == before  # nothing was stored as an env
    assert not any(path.name.startswith(("..", "named")) for path in (edge_server.data / "envs").rglob("*"))


def test_query_values_and_path_ids_are_checked(api, edge_server) -> None:
    for query in QUERIES:
        path = query.replace("RUN", edge_server.run_id)
        answer = api.get(path)
        _refused(answer, path)
        assert str(edge_server.data) not in answer.text
    assert len(api.get("/api/runs?limit=1").json()) == 1  # the checks do not refuse good values
    key = edge_server.keys["all"]
    for page in ("/runs/%00", "/runs/" + "a" * 5000, "/runs/%3Cscript%3E", "/jobs/job_%00", "/envs/%00", "/envs/a%0Ab"):
        answer = api.get(f"{page}?key={key}", follow_redirects=True)
        assert answer.status_code == 404 and "<script>" not in answer.text, (page[:40], answer.status_code)


def test_run_bodies_are_checked_and_nothing_is_queued(api) -> None:
    before = api.get("/api/stats").json()["runs"]
    for change in RUN_BODIES:
        body = {"env_slug": "toy/arith-v0", "model": "oracle", "n": 1} | change
        for path in ("/api/runs", "/api/runs?until=ended&stream=progress"):
            _refused(api.post(path, content=json.dumps(body)), change, (400,))
    for raw in RAW_BODIES:
        _refused(api.post("/api/runs", content=raw), raw[:20], (400,))
        _refused(api.post("/api/jobs", content=raw), raw[:20], (400,))
        _refused(api.post("/api/envs", content=raw), raw[:20], (400,))
    assert api.get("/api/stats").json()["runs"] == before


def _exchange(url: str, head: str, body_size: int, chunked: bool = False) -> tuple[int, int, str]:
    """Send ``head`` and up to ``body_size`` bytes of body (chunked when asked), reading as soon as the server
    answers: (status, bytes of body sent before the answer came, answer text)."""
    where = urlparse(url)
    sock = socket.create_connection((where.hostname, where.port), timeout=60)
    sent, chunk = 0, b"A" * MiB
    try:
        sock.sendall(head.encode())
        while sent < body_size:
            if select.select([sock], [], [], 0)[0]:
                break  # answered: stop sending
            piece = b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        answer = b""
        sock.settimeout(60)
        while b"\r\n\r\n" not in answer or len(answer) < answer.find(b"\r\n\r\n") + 10:
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    finally:
        sock.close()
    status = int(answer.split(b" ", 2)[1])
    return status, sent, answer.decode(errors="replace")


def _post_head(path: str, key: str | None, length: int | None) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    lines += [f"Authorization: Bearer {key}"] if key else []
    lines += [f"Content-Length: {length}"] if length is not None else ["Transfer-Encoding: chunked"]
    return "\r\n".join(lines) + "\r\n\r\n"


@pytest.mark.parametrize("path", ["/api/envs", "/api/runs", "/api/jobs", "/api/runs?until=ended&stream=progress"])
@pytest.mark.parametrize("key", [None, "rk_wrong"])
def test_an_unauthenticated_big_body_is_answered_401_unread(edge_server, path, key) -> None:
    status, sent, text = _exchange(edge_server.url, _post_head(path, key, 150 * MiB), 150 * MiB)
    assert status == 401, text
    assert sent < 150 * MiB  # answered before the body was sent, so before it could be read


@pytest.mark.parametrize("path", ["/api/envs", "/api/jobs"])
def test_a_key_without_the_scope_is_answered_403_unread(edge_server, path) -> None:
    status, sent, text = _exchange(
        edge_server.url, _post_head(path, edge_server.keys["run_only"], 150 * MiB), 150 * MiB
    )
    assert status == 403 and "scope" in text, text
    assert sent < 150 * MiB


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("path", ["/api/envs", "/api/runs"])
def test_an_oversized_body_is_refused_without_being_buffered(edge_server, path, chunked) -> None:
    pid = edge_server.process.pid
    size = 200 * MiB
    before = _rss(pid)
    length = None if chunked else size
    status, sent, text = _exchange(edge_server.url, _post_head(path, edge_server.keys["all"], length), size, chunked)
    after = _rss(pid)
    assert status == 413 and "over" in text, text
    assert sent < size
    assert after - before < size // 2, (before, after)
    assert str(edge_server.data) not in text
