"""MCP both ways: a served session's tools reached by the official ``mcp`` SDK's client.

A real ``rolloutgym serve`` process; the MCP client plays the local env's oracle moves
through MCP tool calls and the served env grades them (reward 1 and the same score as in
process), once with the bridge in process and once as a stdio MCP server subprocess.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from rolloutgym.registry import get_registry
from rolloutgym.serve import AsyncRemoteEnv, ServerProcess, open_session
from rolloutgym.serve.mcp_bridge import EPISODE_TOOL, session_mcp_server

GUESS = "toy/guess-v0"


@pytest.fixture(scope="module")
def server() -> Any:
    with ServerProcess([GUESS]) as running:
        yield running


async def _play_oracle_over_mcp(client: Any, task: int) -> tuple[dict[str, Any], Any]:
    local = get_registry().make(GUESS, task=task)
    local.reset(seed=0)
    listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == {"guess", EPISODE_TOOL}
    guess = next(tool for tool in listed.tools if tool.name == "guess")
    assert guess.input_schema == local.tools[0]["function"]["parameters"]
    terminated = False
    result: Any = None
    while not terminated:
        action = local.oracle_action()
        observation, reward, terminated, _, info = local.step(action)
        for call in action["tool_calls"]:
            result = await client.call_tool(call["name"], call["arguments"])
            assert result.content[0].text == observation[0]["content"]
            assert result.structured_content["reward"] == reward
    episode = await client.call_tool(EPISODE_TOOL, {})
    local.close()
    return episode.structured_content, info["score"]


def test_session_tools_through_an_in_process_mcp_client(server: ServerProcess) -> None:
    from mcp import Client

    async def scenario() -> tuple[dict[str, Any], Any]:
        url = server.url(GUESS)
        environment = AsyncRemoteEnv.adopt(url, open_session(url, task=3), transport="http")
        try:
            async with Client(session_mcp_server(environment, seed=0)) as client:
                outcome = await _play_oracle_over_mcp(client, 3)
                late = await client.call_tool("guess", {"number": 1})
                assert late.is_error
                return outcome
        finally:
            await environment.close()

    episode, local_score = asyncio.run(scenario())
    assert episode["done"] and episode["return"] == 1.0
    assert episode["score"]["value"] == 1.0
    expected = local_score.to_dict() if hasattr(local_score, "to_dict") else local_score
    assert json.loads(json.dumps(episode["score"])) == json.loads(json.dumps(expected))


def test_session_tools_as_a_stdio_mcp_server(server: ServerProcess) -> None:
    from mcp import Client, StdioServerParameters

    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rolloutgym.serve.mcp_bridge", server.url(GUESS), "--task", "5", "--seed", "0"],
    )

    async def scenario() -> dict[str, Any]:
        async with Client(parameters) as client:
            episode, _ = await _play_oracle_over_mcp(client, 5)
            return episode

    episode = asyncio.run(scenario())
    assert episode["done"] and episode["score"]["value"] == 1.0
