"""A served session's tools as an MCP server (official ``mcp`` SDK), graded by the env.

An MCP-speaking agent or harness acts inside a rolloutgym env: each MCP ``tools/call`` is
one env step with an assistant message that calls that tool, and the tool result is the
env's answer (its ``tool`` messages), with ``reward``, ``terminated``, ``truncated`` and
the ``score`` in ``structuredContent``. The extra tool ``rolloutgym_episode`` reports the
episode so far (steps, return, score) without stepping.

Python (in process, or any MCP transport of the SDK)::

    server = session_mcp_server(AsyncRemoteEnv.adopt(url, open_session(url, task=3)))
    async with mcp.Client(server) as client:
        tools = await client.list_tools()

Command line (stdio, for MCP hosts)::

    python -m rolloutgym.serve.mcp_bridge http://127.0.0.1:8000/toy/guess-v0 --task 3 --seed 0
"""

from __future__ import annotations

import argparse
import itertools
import json
from typing import Any

__all__ = ["EPISODE_TOOL", "session_mcp_server"]

EPISODE_TOOL = "rolloutgym_episode"


def _text(messages: Any) -> str:
    if isinstance(messages, list):
        parts = [message.get("content") for message in messages if isinstance(message, dict)]
        return "\n".join(part if isinstance(part, str) else json.dumps(part) for part in parts if part is not None)
    return messages if isinstance(messages, str) else json.dumps(messages, default=repr)


def session_mcp_server(environment: Any, *, seed: int | None = None, name: str = "rolloutgym") -> Any:
    """An MCP low-level ``Server`` whose tools are ``environment``'s (reset on first use with ``seed``)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from rolloutgym_protocol import Score

    from ._codec import encode_value

    state: dict[str, Any] = {
        "reset": False,
        "steps": 0,
        "return": 0.0,
        "done": False,
        "score": None,
        "observation": None,
    }
    call_ids = itertools.count()

    async def ensure_reset() -> None:
        if not state["reset"]:
            observation, _ = await environment.reset(seed=seed)
            state.update(reset=True, observation=observation)

    def tool_list() -> list[Any]:
        tools = []
        for definition in getattr(environment, "tools", None) or []:
            function = definition.get("function", definition)
            tools.append(
                types.Tool(
                    name=function["name"],
                    description=function.get("description"),
                    inputSchema=function.get("parameters") or {"type": "object"},
                )
            )
        tools.append(
            types.Tool(
                name=EPISODE_TOOL,
                description="The rolloutgym episode so far: steps, return, whether it ended, and its score.",
                inputSchema={"type": "object", "properties": {}},
            )
        )
        return tools

    def episode() -> dict[str, Any]:
        return {
            "task_id": environment.rolloutgym_task_id,
            "steps": state["steps"],
            "return": state["return"],
            "done": state["done"],
            "score": state["score"],
        }

    async def on_list_tools(context: Any, params: Any) -> Any:
        await ensure_reset()
        return types.ListToolsResult(tools=tool_list())

    async def on_call_tool(context: Any, params: Any) -> Any:
        await ensure_reset()
        if params.name == EPISODE_TOOL:
            return types.CallToolResult(
                content=[types.TextContent(text=json.dumps(episode()))], structuredContent=episode()
            )
        if state["done"]:
            return types.CallToolResult(
                content=[types.TextContent(text="the episode has ended; no more tool calls are graded")],
                structuredContent=episode(),
                isError=True,
            )
        call = {"id": f"mcp_{next(call_ids)}", "name": params.name, "arguments": dict(params.arguments or {})}
        observation, reward, terminated, truncated, info = await environment.step(
            {"role": "assistant", "content": "", "tool_calls": [call]}
        )
        state["steps"] += 1
        state["return"] += reward
        state["done"] = terminated or truncated
        score = Score.from_info(info)
        if score is not None:
            state["score"] = score.to_dict()
        result = {
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "score": state["score"],
            "info": encode_value(info),
        }
        return types.CallToolResult(content=[types.TextContent(text=_text(observation))], structuredContent=result)

    return Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def main(argv: list[str] | None = None) -> None:
    """Serve one session of a served env's tools over stdio."""
    import anyio
    from mcp.server.stdio import stdio_server

    from .client import AsyncRemoteEnv, open_session

    parser = argparse.ArgumentParser(description="A served rolloutgym env's tools as an MCP server (stdio).")
    parser.add_argument("url", help="http://HOST:PORT/ENV_ID")
    parser.add_argument("--task", default=None, help="task index or id")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--token", default=None)
    arguments = parser.parse_args(argv)
    task: Any = (
        int(arguments.task) if arguments.task is not None and arguments.task.lstrip("-").isdigit() else arguments.task
    )
    environment = AsyncRemoteEnv.adopt(
        arguments.url,
        open_session(arguments.url, task=task, token=arguments.token),
        token=arguments.token,
        transport="http",
    )
    server = session_mcp_server(environment, seed=arguments.seed)

    async def run() -> None:
        try:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await environment.close()

    anyio.run(run)


if __name__ == "__main__":
    main()
