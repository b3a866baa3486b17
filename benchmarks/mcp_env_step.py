"""MCP tools in env files: what the env adds to a ``tools/call``, and what an episode's server costs.

Measured in one run on this machine, against the tests' helpdesk MCP server
(``plugins/workflow/tests/mcp_helpdesk_server.py``, official ``mcp`` SDK):

* per call: ``McpWorkflowEnv.step`` with one tool call (argument check, the call on the
  episode's own loop, the tool message) vs the bare SDK client calling the same tool (the
  floor); sequential, and with 16 episodes in flight at once; and the design not taken
  (every session on one loop thread, each call a thread hop), 16 in flight;
* per episode: a 2-call episode with a stdio server (process start and stop) vs an HTTP
  session on a running server.

Run: ``python benchmarks/mcp_env_step.py [--calls 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve().parent.parent / "plugins/workflow/tests/mcp_helpdesk_server.py"
CALL = {"name": "find_customer", "arguments": {"email": "ana@example.com"}}


def _start_http() -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the HTTP MCP server did not start")


def _env_file(folder: Path, mcp: dict[str, Any]) -> Any:
    from rolloutgym.declarative import open_env_file

    task = {"id": "t", "instruction": "Find Ana.", "reference_actions": [CALL, CALL]}
    payload = {"slug": "bench", "name": "Bench", "template": "custom", "config": {"mcp": mcp}, "tasks": [task]}
    path = folder / f"bench-{len(list(folder.iterdir()))}.json"
    path.write_text(json.dumps(payload))
    return open_env_file(path)


async def _bare(url: str, calls: int) -> None:
    from mcp import Client

    async with Client(url, mode="legacy", cache=None) as client:
        for _ in range(calls):
            result = await client.call_tool(CALL["name"], CALL["arguments"])
            assert not result.is_error


async def _env(env_file: Any, calls: int) -> None:
    env = env_file.make(env_file.tasks[0])
    try:
        await env.reset()
        action = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": CALL}]}
        env.core.max_tool_calls = calls + 1
        for _ in range(calls):
            messages, *_ = await env.step(action)
            assert not messages[0]["content"].startswith("error"), messages
    finally:
        await env.close()


async def _hop(url: str, calls: int) -> None:
    """The other design: the session owned by one loop in another thread, every call a thread hop."""
    from rolloutgym_workflow.mcp_session import McpSession, run_on, run_on_mcp_loop
    from rolloutgym_workflow.mcp_settings import McpSettings

    session = McpSession(McpSettings.from_config({"url": url}))
    await run_on_mcp_loop(session.open())
    try:
        for _ in range(calls):
            result = await run_on(session.loop, session.call(CALL["name"], CALL["arguments"]))
            assert not result.is_error
    finally:
        await run_on(session.loop, session.close())


async def _timed(coroutines: list[Any]) -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds (both threads; the server's time is not in it)."""
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*coroutines)
    return time.perf_counter() - started, time.process_time() - cpu


async def _episode_seconds(env_file: Any, episodes: int) -> float:
    started = time.perf_counter()
    for _ in range(episodes):
        await _env(env_file, 2)
    return (time.perf_counter() - started) / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=3)
    options = parser.parse_args()
    calls, wide = options.calls, 16
    process, url = _start_http()
    try:
        with tempfile.TemporaryDirectory() as folder:
            http_file = _env_file(Path(folder), {"url": url})
            stdio_file = _env_file(Path(folder), {"command": [sys.executable, str(SERVER)], "timeout": 120})
            asyncio.run(_bare(url, 20))  # warm-up: imports, connections
            asyncio.run(_env(http_file, 20))
            bare = asyncio.run(_timed([_bare(url, calls)]))
            env = asyncio.run(_timed([_env(http_file, calls)]))
            bare_wide = asyncio.run(_timed([_bare(url, calls // wide) for _ in range(wide)]))
            env_wide = asyncio.run(_timed([_env(http_file, calls // wide) for _ in range(wide)]))
            hop_wide = asyncio.run(_timed([_hop(url, calls // wide) for _ in range(wide)]))
            http_episode = asyncio.run(_episode_seconds(http_file, options.episodes))
            stdio_episode = asyncio.run(_episode_seconds(stdio_file, options.episodes))
    finally:
        process.terminate()
        process.wait(timeout=30)
    for label, floor, ours in (("sequential", bare, env), (f"{wide} episodes in flight", bare_wide, env_wide)):
        print(
            f"{label}, {calls} calls over HTTP: bare SDK client {floor[0] * 1e6 / calls:.0f} us/call wall, "
            f"{floor[1] * 1e6 / calls:.0f} us CPU; McpWorkflowEnv.step {ours[0] * 1e6 / calls:.0f} us wall, "
            f"{ours[1] * 1e6 / calls:.0f} us CPU; ratio wall {ours[0] / floor[0]:.2f}x, CPU {ours[1] / floor[1]:.2f}x"
        )
    print(
        f"the other design, sessions on one loop thread, {wide} in flight: {hop_wide[0] * 1e6 / calls:.0f} us/call "
        f"wall, {hop_wide[1] * 1e6 / calls:.0f} us CPU; ratio to the bare client "
        f"wall {hop_wide[0] / bare_wide[0]:.2f}x, CPU {hop_wide[1] / bare_wide[1]:.2f}x"
    )
    print(
        f"2-call episode: HTTP session {http_episode * 1000:.0f} ms, stdio server process {stdio_episode * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
