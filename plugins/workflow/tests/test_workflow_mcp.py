"""Env files whose tools come from an MCP server (``config.mcp``), against a real MCP server.

The server (``mcp_helpdesk_server.py``) is written with the official ``mcp`` SDK's
``MCPServer`` and keeps its state in the server process (stdio) or per MCP session
(streamable HTTP on 127.0.0.1). Nothing here needs the network.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="needs the mcp SDK >= 2 (pip install 'rolloutgym-workflow[mcp]')")

from rolloutgym.declarative import Environment, open_env_file  # noqa: E402
from rolloutgym.runner import run  # noqa: E402
from rolloutgym_protocol import check_async_env  # noqa: E402
from rolloutgym_protocol.errors import EnvFileError  # noqa: E402
from rolloutgym_workflow.mcp_session import McpServerError  # noqa: E402

SERVER = Path(__file__).with_name("mcp_helpdesk_server.py")
T100 = {
    "ticket_id": "T-100",
    "customer_id": "C-2",
    "subject": "Slow wifi",
    "priority": "normal",
    "status": "open",
    "resolution": None,
}


def _ticket(ticket_id: str, customer: str, subject: str, priority: str) -> dict[str, Any]:
    return {
        "ticket_id": ticket_id,
        "customer_id": customer,
        "subject": subject,
        "priority": priority,
        "status": "open",
        "resolution": None,
    }


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


TASKS = [
    {
        "id": "open-ana",
        "instruction": "Open a high priority ticket for ana@example.com: 'Router will not boot'.",
        "reference_actions": [
            _call("find_customer", email="ana@example.com"),
            _call("create_ticket", customer_id="C-1", subject="Router will not boot", priority="high"),
        ],
        "reference_answer": "Opened ticket T-1 for Ana.",
        "hidden_ground_truth": {"tickets": [T100, _ticket("T-1", "C-1", "Router will not boot", "high")]},
    },
    {
        "id": "close-100",
        "instruction": "Close ticket T-100 with the resolution 'replaced the modem'.",
        "reference_actions": [_call("close_ticket", ticket_id="T-100", resolution="replaced the modem")],
        "hidden_ground_truth": {"tickets": [{**T100, "status": "closed", "resolution": "replaced the modem"}]},
    },
    {
        "id": "open-and-close",
        "instruction": "Open a low priority ticket 'Invoice copy' for bo@example.com and close T-100 as 'duplicate'.",
        "reference_actions": [
            _call("find_customer", email="bo@example.com"),
            _call("create_ticket", customer_id="C-2", subject="Invoice copy", priority="low"),
            _call("close_ticket", ticket_id="T-100", resolution="duplicate"),
        ],
        "hidden_ground_truth": {
            "tickets": [
                {**T100, "status": "closed", "resolution": "duplicate"},
                _ticket("T-1", "C-2", "Invoice copy", "low"),
            ]
        },
    },
]


def _env_file(path: Path, mcp: dict[str, Any], *, tasks: list[dict[str, Any]] = TASKS, **config: Any) -> Path:
    payload = {
        "slug": "helpdesk",
        "name": "Helpdesk",
        "template": "custom",
        "description": "You are a helpdesk agent. Use the ticket tools.",
        "config": {
            "mcp": {"state_tool": "dump_state", "exclude": ["self_destruct", "reset_state", "weekly_report"], **mcp},
            **config,
        },
        "tasks": tasks,
    }
    path.write_text(json.dumps(payload, indent=1))
    return path


def _stdio(pid_dir: Path, **extra: Any) -> dict[str, Any]:
    # A generous start-up limit: importing the SDK's server stack takes seconds on a loaded 2-core CI machine.
    return {
        "command": [sys.executable, str(SERVER)],
        "env": {"HELPDESK_PID_DIR": str(pid_dir)},
        "timeout": 120,
        **extra,
    }


def _pids(pid_dir: Path) -> list[int]:
    return sorted(int(path.stem) for path in pid_dir.glob("*.pid"))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def _servers_of(pid_dir: Path) -> list[int]:
    """Running processes started with ``HELPDESK_PID_DIR=pid_dir``, pid file written or not (from /proc)."""
    marker = f"HELPDESK_PID_DIR={pid_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if marker in environ.split(b"\0") and _running(int(entry.name)):
                found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The helpdesk over streamable HTTP on 127.0.0.1 (one server process for the module)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("http-server") / "stderr.txt"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(SERVER), "http", str(port)], stdout=subprocess.DEVNULL, stderr=stderr
        )
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                pytest.fail(f"the HTTP MCP server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(timeout=30)


def _cli_run(path: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = "from rolloutgym.cli import console_main; console_main()"
    return subprocess.run(
        [sys.executable, "-c", command, "run", str(path), "--policy", "oracle", "-q", "-o", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=path.parent,
    )


def _rewards(path: Path) -> dict[str, float]:
    rewards = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        for trajectory in record.get("trajectories") or []:
            rewards[record["item"]["id"]] = sum(step["reward"] for step in trajectory["steps"])
    return rewards


def test_stdio_server_env_file_oracle_scores_1_and_null_0(tmp_path: Path) -> None:
    """``rolloutgym run FILE --policy oracle``: 1.0 on every task; null: 0.0; every server process is gone."""
    path = _env_file(tmp_path / "helpdesk.json", _stdio(tmp_path))
    completed = _cli_run(path, tmp_path / "oracle.jsonl")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert _rewards(tmp_path / "oracle.jsonl") == {"open-ana": 1.0, "close-100": 1.0, "open-and-close": 1.0}
    null = run(str(path), policy="null", out=None)
    assert null.summary.mean_reward == 0.0
    assert null.summary.num_errors == 0
    pids = _pids(tmp_path)
    assert len(pids) == 6  # one server process per episode
    assert not [pid for pid in pids if _running(pid)]


def test_http_server_env_file_oracle_scores_1_and_null_0(tmp_path: Path, http_url: str) -> None:
    """One MCP session per episode: concurrent episodes on one HTTP server each see a fresh helpdesk."""
    path = _env_file(tmp_path / "helpdesk.json", {"url": http_url})
    oracle = run(str(path), policy="oracle", out=None, num_rollouts=2)
    assert oracle.summary.num_errors == 0
    assert [task.mean_reward for task in oracle.summary.tasks] == [1.0, 1.0, 1.0]
    assert run(str(path), policy="null", out=None).summary.mean_reward == 0.0


async def _episode(env: Any) -> tuple[float, dict[str, Any]]:
    observation, _ = await env.reset(seed=0)
    while True:
        observation, reward, terminated, truncated, info = await env.step(env.oracle_action())
        if terminated or truncated:
            return reward, info


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_state_does_not_leak_between_episodes(tmp_path: Path, transport: str, request: Any) -> None:
    mcp = _stdio(tmp_path) if transport == "stdio" else {"url": request.getfixturevalue("http_url")}
    env_file = open_env_file(_env_file(tmp_path / "helpdesk.json", mcp))
    env = env_file.make(env_file.tasks[0])

    async def two_episodes() -> list[tuple[float, dict[str, Any]]]:
        try:
            return [await _episode(env), await _episode(env)]
        finally:
            await env.close()

    (first, first_info), (second, second_info) = asyncio.run(two_episodes())
    assert first == second == 1.0
    # The second episode's ticket is T-1 again, and the first episode's is not there.
    assert (
        first_info["state"]["tickets"] == second_info["state"]["tickets"] == TASKS[0]["hidden_ground_truth"]["tickets"]
    )
    if transport == "stdio":
        pids = _pids(tmp_path)
        assert len(pids) == 2
        assert not [pid for pid in pids if _running(pid)]


def test_tools_are_listed_with_their_schemas_and_checked_before_calling(tmp_path: Path, http_url: str) -> None:
    env_file = open_env_file(_env_file(tmp_path / "helpdesk.json", {"url": http_url}))
    env = env_file.make(env_file.tasks[0])
    # Before any reset, the tools are listed once (LLM policies read them when they bind to the env).
    names = [tool["function"]["name"] for tool in env.tools]
    assert names == ["find_customer", "create_ticket", "close_ticket", "list_tickets"]
    create = env.tools[1]["function"]
    assert create["description"] == "Open a support ticket for a customer."
    assert create["parameters"]["properties"]["priority"]["enum"] == ["low", "normal", "high"]

    def calls(*items: dict[str, Any]) -> dict[str, Any]:
        tool_calls = [{"id": f"c{index}", "function": item} for index, item in enumerate(items)]
        return {"role": "assistant", "content": "", "tool_calls": tool_calls}

    async def episode() -> tuple[list[dict[str, Any]], dict[str, Any], float, dict[str, Any]]:
        try:
            await env.reset()
            messages, _, _, _, info = await env.step(
                calls(
                    {"name": "delete_everything", "arguments": {}},
                    {
                        "name": "create_ticket",
                        "arguments": '{"customer_id": "C-1", "subject": "x", "priority": "urgent"}',
                    },
                    {"name": "create_ticket", "arguments": {"customer_id": "C-1"}},
                    {"name": "close_ticket", "arguments": "{not json"},
                    {"name": "close_ticket", "arguments": {"ticket_id": "T-9", "resolution": "done"}},
                    {"name": "find_customer", "arguments": {"email": "ana@example.com"}},
                )
            )
            _, reward, terminated, _, final = await env.step({"role": "assistant", "content": "Nothing to do."})
            assert terminated
            return messages, info, reward, final
        finally:
            await env.close()

    messages, info, reward, final = asyncio.run(episode())
    contents = [message["content"] for message in messages]
    assert [message["tool_call_id"] for message in messages] == ["c0", "c1", "c2", "c3", "c4", "c5"]
    assert contents[0].startswith("error: unknown tool 'delete_everything'; available tools: find_customer,")
    assert contents[1] == "error: create_ticket: argument 'priority': 'urgent' is not one of ['low', 'normal', 'high']"
    assert contents[2] == "error: create_ticket: arguments: 'subject' is a required property"
    assert contents[3].startswith("error: close_ticket: arguments are not valid JSON")
    # The server's isError result (its text as the SDK words it): a tool outcome, not a crash.
    assert contents[4] == "error: Error executing tool close_ticket: no ticket 'T-9'"
    assert json.loads(contents[5]) == {"customer_id": "C-1", "name": "Ana Lima"}
    assert info["invalid_actions"] == 4  # the server's own error is not the model's malformed call
    assert info["tool_calls"] == 6
    assert reward == 0.0  # nothing was opened
    assert final["state"]["tickets"] == [T100]


def test_value_contract_with_random_actions(tmp_path: Path, http_url: str) -> None:
    """The async env contract (spaces, reset/step values, a seeded reset twice) with sampled hostile messages."""
    env_file = open_env_file(_env_file(tmp_path / "helpdesk.json", {"url": http_url}))
    env = env_file.make(env_file.tasks[1])

    async def check() -> None:
        try:
            await check_async_env(env, steps=5)
        finally:
            await env.close()
            await env.close()  # idempotent

    asyncio.run(check())


class _BreaksOnSecondStep:
    """A policy that plays the oracle once, then raises (an episode that errors while its server runs)."""

    def for_env(self, environment: Any) -> Any:
        turns = iter(range(100))

        def act(observation: Any) -> Any:
            if next(turns) == 1:
                raise RuntimeError("the policy broke")
            return environment.oracle_action()

        return act


def test_server_is_stopped_when_the_episode_errors_and_the_run_goes_on(tmp_path: Path) -> None:
    path = _env_file(tmp_path / "helpdesk.json", _stdio(tmp_path), tasks=TASKS[:1])
    result = run(str(path), policy=_BreaksOnSecondStep(), out=None)
    assert result.summary.num_errors == 1
    assert result.summary.errors_by_type == {"RuntimeError": 1}
    pids = _pids(tmp_path)
    assert len(pids) == 1
    assert not _running(pids[0])


def test_server_crash_mid_episode_is_a_typed_episode_error(tmp_path: Path) -> None:
    crash = {
        "id": "crash",
        "instruction": "Find Ana, then press the red button.",
        "reference_actions": [_call("find_customer", email="ana@example.com"), _call("self_destruct")],
        "hidden_ground_truth": {"tickets": [T100]},
    }
    stdio = _stdio(tmp_path, exclude=["reset_state", "weekly_report"])
    path = _env_file(tmp_path / "helpdesk.json", stdio, tasks=[TASKS[1], crash])
    result = run(str(path), policy="oracle", out=tmp_path / "run.jsonl")
    assert [task.mean_reward for task in result.summary.tasks] == [1.0, 0.0]
    assert result.summary.errors_by_type == {"McpServerError": 1}
    errors = [
        error
        for line in (tmp_path / "run.jsonl").read_text().splitlines()
        for error in json.loads(line).get("errors") or []
    ]
    message = errors[0]["error_message"]
    assert "stopped while calling 'self_destruct'" in message
    assert "helpdesk: self-destruct requested, exiting" in message  # the server's stderr tail
    assert errors[0]["where"] == "env" and errors[0]["step"] == 1
    assert not [pid for pid in _pids(tmp_path) if _running(pid)]


def test_a_call_the_server_does_not_answer_in_time_is_a_typed_episode_error(tmp_path: Path, http_url: str) -> None:
    slow = {"url": http_url, "call_timeout": 1, "exclude": []}
    env_file = open_env_file(_env_file(tmp_path / "slow.json", slow))
    env = env_file.make(env_file.tasks[0])
    action = {"role": "assistant", "tool_calls": [{"name": "weekly_report", "arguments": {"seconds": 30}}]}

    async def episode() -> None:
        try:
            await env.reset()
            await env.step(action)
        finally:
            await env.close()

    with pytest.raises(McpServerError, match=r"did not answer a call of 'weekly_report' within 1 s"):
        asyncio.run(episode())


def _reset_error(path: Path) -> BaseException:
    env_file = open_env_file(path)
    env = env_file.make(env_file.tasks[0])

    async def reset() -> None:
        try:
            await env.reset()
        finally:
            await env.close()

    with pytest.raises((McpServerError, EnvFileError)) as caught:
        asyncio.run(reset())
    return caught.value


def test_a_server_that_fails_to_start_is_reported_with_its_stderr(tmp_path: Path) -> None:
    script = "import sys; sys.stderr.write('helpdesk: missing HELPDESK_DB, cannot start\\n'); sys.exit(2)"
    error = _reset_error(_env_file(tmp_path / "a.json", {"command": [sys.executable, "-c", script]}))
    assert isinstance(error, McpServerError)
    assert str(error).startswith(f"MCP server (command `{sys.executable} -c ")
    assert "helpdesk: missing HELPDESK_DB, cannot start" in str(error)

    error = _reset_error(_env_file(tmp_path / "b.json", {"command": ["rolloutgym-no-such-mcp-server", "--stdio"]}))
    assert isinstance(error, McpServerError)
    assert "the executable was not found (rolloutgym-no-such-mcp-server); check config.mcp.command" in str(error)


def test_a_server_that_never_lists_its_tools_times_out(tmp_path: Path) -> None:
    silent = {"command": [sys.executable, "-c", "import time; time.sleep(600)"], "timeout": 1}
    error = _reset_error(_env_file(tmp_path / "silent.json", silent))
    assert isinstance(error, McpServerError)
    assert "did not start and list its tools within 1 s (raise config.mcp.timeout" in str(error)


def test_tool_names_in_the_config_must_exist_on_the_server_and_not_clash(tmp_path: Path, http_url: str) -> None:
    typo = _env_file(tmp_path / "typo.json", {"url": http_url, "state_tool": "dump_stat"})
    error = _reset_error(typo)
    assert isinstance(error, EnvFileError)
    assert "config.mcp.state_tool: the server has no tool 'dump_stat'. Did you mean 'dump_state'?" in str(error)
    local = [{"name": "find_customer", "response": {"customer_id": "C-0"}}]
    clash = _reset_error(_env_file(tmp_path / "clash.json", {"url": http_url}, tools=local))
    assert isinstance(clash, EnvFileError)
    assert "the server's tool 'find_customer' has the name of a tool in config.tools" in str(clash)


@pytest.mark.parametrize(
    ("mcp", "expected"),
    [
        ({}, "config.mcp: give the MCP server either 'command'"),
        ({"command": []}, "config.mcp: 'command' is empty"),
        ({"url": "ws://127.0.0.1:1/mcp"}, "config.mcp.url: 'ws://127.0.0.1:1/mcp' is not an http(s):// URL"),
        ({"url": "http://127.0.0.1:1/mcp", "env": {"A": "1"}}, "'env' and 'cwd' are for a 'command' server"),
        ({"command": ["x"], "timeout": 0}, "config.mcp.timeout: Input should be greater than 0"),
    ],
)
def test_malformed_mcp_config_is_an_env_file_error(mcp: dict[str, Any], expected: str) -> None:
    with pytest.raises(EnvFileError) as caught:
        Environment(slug="bad", name="Bad", template="workflow", config={"mcp": mcp})
    assert expected in str(caught.value)
    with pytest.raises(EnvFileError, match="give at least one tool, or take the tools from an MCP server"):
        Environment(slug="bad", name="Bad", template="custom", config={})


def test_local_tools_next_to_server_tools_with_a_shared_session(tmp_path: Path, http_url: str) -> None:
    """``per_episode: false`` keeps one session; ``reset_tool`` starts every episode over; local tools run here."""
    note = {
        "name": "add_note",
        "mutates": {"path": "notes[]", "value": "${args.text}"},
        "paramsSchema": {"text": "string"},
    }
    tasks = [
        {
            **TASKS[0],
            "reference_actions": [*TASKS[0]["reference_actions"], _call("add_note", text="called Ana")],
            "hidden_ground_truth": {**TASKS[0]["hidden_ground_truth"], "notes": ["called Ana"]},
        }
    ]
    mcp = {
        "url": http_url,
        "per_episode": False,
        "reset_tool": "reset_state",
        "exclude": ["self_destruct", "weekly_report"],
    }
    env_file = open_env_file(_env_file(tmp_path / "shared.json", mcp, tasks=tasks, tools=[note]))

    async def three_episodes() -> list[tuple[float, dict[str, Any], Any]]:
        outcomes = []
        for _ in range(3):
            env = env_file.make(env_file.tasks[0])
            try:
                reward, info = await _episode(env)
                outcomes.append((reward, info, env.source.shared_session))
            finally:
                await env.close()
        await env.source.close_shared()
        return outcomes

    outcomes = asyncio.run(three_episodes())
    assert [reward for reward, _, _ in outcomes] == [1.0, 1.0, 1.0]
    assert all(info["state"] == {"notes": ["called Ana"], **tasks[0]["hidden_ground_truth"]} for _, info, _ in outcomes)
    sessions = {id(session) for _, _, session in outcomes}
    assert len(sessions) == 1  # one session for every episode
    assert not outcomes[0][2].alive  # closed by close_shared()


_WITHOUT_MCP = """
import sys


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mcp", "mcp_types"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Blocker())
from rolloutgym.declarative import open_env_file

try:
    open_env_file(sys.argv[1])
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_without_the_mcp_sdk_the_env_file_says_what_to_install(tmp_path: Path) -> None:
    path = _env_file(tmp_path / "helpdesk.json", {"url": "http://127.0.0.1:9/mcp"})
    completed = subprocess.run(
        [sys.executable, "-c", _WITHOUT_MCP, str(path)], capture_output=True, text=True, timeout=300
    )
    assert completed.stdout.startswith(
        "EnvFileError environment 'helpdesk': config.mcp: MCP tools in env files need"
    ), completed.stdout + completed.stderr
    assert re.search(r"pip install '\S*plugins/workflow\[mcp\]'", completed.stdout), completed.stdout


def test_tools_before_the_first_reset_come_from_one_short_lived_server(tmp_path: Path) -> None:
    env_file = open_env_file(_env_file(tmp_path / "helpdesk.json", _stdio(tmp_path)))
    first, second = (env_file.make(task) for task in env_file.tasks[:2])
    assert [tool["function"]["name"] for tool in first.tools] == [
        "find_customer",
        "create_ticket",
        "close_ticket",
        "list_tickets",
    ]
    assert second.tools == first.tools  # listed once for the env file
    pids = _pids(tmp_path)
    assert len(pids) == 1
    assert not _running(pids[0])


def test_a_run_timeout_during_server_start_leaves_no_process(tmp_path: Path) -> None:
    """The run's timeout cancels reset while the stdio server starts; the process is stopped all the same."""
    path = _env_file(tmp_path / "helpdesk.json", _stdio(tmp_path), tasks=TASKS[:1])
    result = run(str(path), policy="oracle", out=None, timeout=0.05)
    assert result.summary.num_errors == 1
    assert result.summary.errors_by_type == {"TimeoutError": 1}
    # The process may have been stopped before it wrote its pid file: look for it by its environment.
    assert not [pid for pid in _pids(tmp_path) if _running(pid)]
    assert _servers_of(tmp_path) == []
