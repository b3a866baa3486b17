"""Recovery after a model-server outage (issue 17, class 6), over real sockets.

A local OpenAI-compatible server (``rolloutgym_testing.http_server``) answers a few
requests, then dies mid-episode; the run records the lost tasks as groups holding only
errors, each keeping the turns it had played. The server comes back at the same address
and ``rolloutgym run --resume`` re-runs exactly those groups, says so, and exits 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from rolloutgym_testing.http_server import LocalHTTPServer

ENV = dict(os.environ, COLUMNS="200")


class GuessingModel:
    """Always guesses 50 with the env's first tool; after ``die_after`` requests the server stops."""

    def __init__(self, die_after: int | None = None) -> None:
        self.die_after = die_after
        self.requests = 0
        self.server: LocalHTTPServer | None = None

    async def __call__(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        self.requests += 1
        if self.die_after is not None and self.requests > self.die_after:
            threading.Thread(target=self.server.stop, daemon=True).start()  # type: ignore[union-attr]
            await asyncio.sleep(3600)  # the connection dies with the server
        request: dict[str, Any] = json.loads(body)
        tools = request.get("tools") or []
        message: dict[str, Any] = {"role": "assistant", "content": "50"}
        if tools:
            name = tools[0]["function"]["name"]
            call = {
                "id": f"call_{self.requests}",
                "type": "function",
                "function": {"name": name, "arguments": '{"number": 50}'},
            }
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        reply = {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "model": request.get("model", "m"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tools else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return 200, {"content-type": "application/json"}, json.dumps(reply).encode()


def _serve(model: GuessingModel, port: int = 0) -> LocalHTTPServer:
    server = LocalHTTPServer(model, port=port)
    model.server = server
    server.start()
    return server


def _run(out: Path, port: int, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "rolloutgym", "run", "toy/guess-v0", "--policy", "openai:outage-test"]
    command += [
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--policy-arg",
        "max_retries=0",
        "--policy-arg",
        "timeout=20",
    ]
    command += ["--limit", "4", "-c", "1", "--seed", "5", "-o", str(out), "-q", *extra]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)


def _groups(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def test_resume_reruns_the_groups_an_outage_turned_into_errors(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    dying = GuessingModel(die_after=7)  # task 0 takes 5 requests; task 1 dies after 2 turns
    server = _serve(dying)
    port = server.port
    try:
        first = _run(out, port)
    finally:
        server.stop()
    assert first.returncode == 1, first.stdout + first.stderr
    groups = _groups(out)
    assert len(groups) == 4
    lost = [group for group in groups if group["errors"] and not group["trajectories"]]
    assert lost, "the outage left groups holding only errors"
    # The interrupted episode keeps the turns it played before the server died.
    partials = [error["partial"] for group in lost for error in group["errors"] if error.get("partial")]
    assert any(len(partial["steps"]) >= 1 for partial in partials)

    back = GuessingModel()
    server = _serve(back, port=port)
    try:
        resumed = _run(out, port, "--resume")
    finally:
        server.stop()
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"re-ran {len(lost)} group" in resumed.stdout
    assert back.requests > 0
    groups = _groups(out)
    assert sorted(group["task_index"] for group in groups) == [0, 1, 2, 3]
    assert all(group["trajectories"] and not group["errors"] for group in groups)

    again = _run(out, port, "--resume")  # nothing left to do
    assert again.returncode == 0 and "re-ran" not in again.stdout
