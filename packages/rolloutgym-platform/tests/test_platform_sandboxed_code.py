"""Code a push key makes a worker run executes in the sandbox as an unprivileged user (:mod:`rolloutgym_platform.
worker_sandbox`), on the real platform (SQLite, then PostgreSQL, the session's shared server).

A pushed Python env file probes, at import, every way out it knows (the worker's database file, its
environment, other organisations' envs and runs, writes outside its folder, the uid, the process table,
a fork loop) and fails with what it got: every route is denied, the run records that clear error, and
the worker goes on to run the next run. A pushed env file that works runs to its score in the sandbox;
an MCP server's command and a ``harness:command`` policy run there too (their marker files, aimed at
the data folder, are never written).
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import httpx
import pytest
from rolloutgym.sandboxes import isolation_problem

pytestmark = pytest.mark.skipif(
    isolation_problem() is not None or os.geteuid() != 0, reason=f"needs root and {isolation_problem()}"
)

EXAMPLE = Path(__file__).parents[3] / "examples" / "refund_agent.py"

PROBE = r"""
import os, json, socket
DATA = {data!r}
got = {{}}
def attempt(name, function):
    try:
        function()
        got[name] = "A"
    except BaseException:
        got[name] = "D"
attempt("db", lambda: open(os.path.join(DATA, "platform.db"), "rb").read(1))
attempt("data", lambda: [n for n in os.listdir(DATA) if n not in ("envs", "sandboxes")] or 1 / 0)
attempt("other_envs", lambda: os.listdir(os.path.join(DATA, "envs", "globex")))
attempt("other_runs", lambda: os.listdir(os.path.join(DATA, "runs", "globex")))
attempt("own_runs", lambda: os.listdir(os.path.join(DATA, "runs", "acme")))
attempt("keys_dir", lambda: os.listdir(os.path.expanduser("~root/.config")))
attempt("write_data", lambda: open(os.path.join(DATA, "pwned.txt"), "w"))
attempt("write_envs", lambda: open(os.path.join(DATA, "envs", "acme", "pwned.txt"), "w"))
attempt("write_own_env", lambda: open(__file__ + ".pwned", "w"))
attempt("write_usr", lambda: open("/usr/pwned", "w"))
attempt("root", lambda: os.setuid(0))
attempt("host_pid1", lambda: open("/proc/1/environ").read().index("DATABASE") and 1 / 0)
attempt("net", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
secrets = sorted(k for k in os.environ if k not in {allowed!r})
forked = 0
for _ in range(3000):
    try:
        if os.fork() == 0:
            import time
            time.sleep(300)
            os._exit(0)
        forked += 1
    except OSError:
        break
report = {{"got": got, "env": secrets, "home": os.environ.get("HOME"), "uid": os.getuid(), "forked": forked}}
raise RuntimeError("PROBE " + json.dumps(report))
"""

DENIED = ["db", "data", "other_envs", "other_runs", "own_runs", "keys_dir", "write_data", "write_envs"]
DENIED += ["write_own_env", "write_usr", "root", "host_pid1", "net"]


def _push(client: httpx.Client, files: dict[str, bytes], slug: str) -> None:
    body = {"kind": "file", "main": next(iter(files)), "slug": slug}
    body["files"] = {name: base64.b64encode(data).decode() for name, data in files.items()}
    answer = client.post("/api/envs", json=body)
    assert answer.status_code in (200, 201), answer.text


def _run(client: httpx.Client, slug: str, model: str, **extra: object) -> str:
    answer = client.post("/api/runs", json={"env_slug": slug, "model": model, "n": 1, "limit": 1, **extra})
    assert answer.status_code == 201, answer.text
    return answer.json()["runId"]


def test_pushed_code_runs_as_an_unprivileged_user_that_sees_nothing_of_the_worker(
    platform_server, wait, request
) -> None:
    from rolloutgym import Client

    if "postgresql" in request.node.name:
        pytest.skip(
            "the sandbox does not depend on the database (its network is its own); SQLite's file is the one to hide"
        )
    from rolloutgym.sandboxes.isolated import BASE_ENVIRONMENT

    data = platform_server.data
    marker = data / "runs" / "acme" / "marker.txt"
    listener = __import__("socket").socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    probe = PROBE.format(data=str(data), port=listener.getsockname()[1], allowed=sorted(BASE_ENVIRONMENT))
    payload = json.loads(json.dumps(_refund_payload()))
    payload["config"]["mcp"] = {"command": ["sh", "-c", f"echo ran > {marker}"]}
    headers = {"Authorization": f"Bearer {platform_server.keys['all']}"}
    with httpx.Client(base_url=platform_server.url, headers=headers, timeout=60) as client:
        _push(client, {"probe.py": probe.encode()}, "sandbox-probe")
        _push(client, {"refund_agent.py": EXAMPLE.read_bytes()}, "sandbox-refund")
        _push(client, {"env.json": json.dumps(payload).encode()}, "sandbox-mcp")
        assert client.post("/api/envs", json={"kind": "id", "id": "toy/arith-v0"}).status_code in (200, 201)
        probed = _run(client, "sandbox-probe", "oracle")
        mcp = _run(client, "sandbox-mcp", "oracle")
        harness = _run(client, "toy/arith-v0", "harness:command", policy_options={"command": f"id > {marker}"})
        refund = _run(client, "sandbox-refund", "oracle")
    listener.close()
    with Client(platform_server.url, platform_server.keys["all"]) as client:
        failed = wait(client, probed)
        assert failed["state"] == "failed" and "PROBE " in failed["error"], failed
        report = json.loads(failed["error"].split("PROBE ", 1)[1])
        assert {name: report["got"].get(name) for name in DENIED} == dict.fromkeys(DENIED, "D"), report
        # set inside by bubblewrap (PWD), Python (LC_CTYPE) and pygame's import (a plugin's), never the worker's
        assert set(report["env"]) <= {"PWD", "LC_CTYPE", "PYGAME_HIDE_SUPPORT_PROMPT"}, report
        assert report["home"] == "/tmp" and report["uid"] >= 1_000_000 and report["forked"] < 600, report
        assert str(data) not in failed["error"]
        for run_id in (mcp, harness):
            assert wait(client, run_id)["state"] in ("failed", "succeeded")
        assert not marker.exists()  # the MCP server's and the harness's commands ran where the data folder is not
        finished = wait(client, refund)  # the worker survived all of it, and a working pushed file scores
        assert finished["state"] == "succeeded" and finished["passRate"] == 1.0, finished
        assert client.download_run(refund, data.parent / "refund-run.jsonl").stat().st_size > 0
    assert (
        not (data / "pwned.txt").exists()
        and not (data / "sandboxes").exists()
        or not any((data / "sandboxes").iterdir())
    )


def _refund_payload() -> dict:
    import runpy

    from rolloutgym.declarative import Environment

    namespace = runpy.run_path(str(EXAMPLE))
    return next(value for value in namespace.values() if isinstance(value, Environment)).to_payload()
