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
    from mcp.server.lowlevel import Server

    session = _McpSession(environment, seed)
    return Server(name, on_list_tools=session.on_list_tools, on_call_tool=session.on_call_tool)


class _McpSession:
    """One env session behind an MCP server: the episode so far, and the two MCP handlers."""

    def __init__(self, environment: Any, seed: int | None) -> None:
        self.environment = environment
        self.seed = seed
        self.reset = False
        self.steps = 0
        self.episode_return = 0.0
        self.done = False
        self.score: dict[str, Any] | None = None
        self.call_ids = itertools.count()

    async def ensure_reset(self) -> None:
        if not self.reset:
            await self.environment.reset(seed=self.seed)
            self.reset = True

    def tool_list(self) -> list[Any]:
        """The env's tools as MCP tools, plus :data:`EPISODE_TOOL`."""
        import mcp_types as types

        tools = []
        for definition in getattr(self.environment, "tools", None) or []:
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

    def episode(self) -> dict[str, Any]:
        return {
            "task_id": self.environment.rolloutgym_task_id,
            "steps": self.steps,
            "return": self.episode_return,
            "done": self.done,
            "score": self.score,
        }

    async def on_list_tools(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        await self.ensure_reset()
        return types.ListToolsResult(tools=self.tool_list())

    async def on_call_tool(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        await self.ensure_reset()
        if params.name == EPISODE_TOOL:
            return types.CallToolResult(
                content=[types.TextContent(text=json.dumps(self.episode()))], structuredContent=self.episode()
            )
        if self.done:
            return types.CallToolResult(
                content=[types.TextContent(text="the episode has ended; no more tool calls are graded")],
                structuredContent=self.episode(),
                isError=True,
            )
        call = {"id": f"mcp_{next(self.call_ids)}", "name": params.name, "arguments": dict(params.arguments or {})}
        observation, result = await self.step(call)
        return types.CallToolResult(content=[types.TextContent(text=_text(observation))], structuredContent=result)

    async def step(self, call: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """One env step with an assistant message calling ``call``: the observation and the structured result."""
        from rolloutgym_protocol import Score

        from ._codec import encode_value

        observation, reward, terminated, truncated, info = await self.environment.step(
            {"role": "assistant", "content": "", "tool_calls": [call]}
        )
        self.steps += 1
        self.episode_return += reward
        self.done = terminated or truncated
        score = Score.from_info(info)
        if score is not None:
            self.score = score.to_dict()
        result = {
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "score": self.score,
            "info": encode_value(info),
        }
        return observation, result


def main(argv: list[str] | None = None) -> None:
    """Serve one session of a served env's tools over stdio."""
    import anyio
    from mcp.server.stdio import stdio_server

    from .client_async import AsyncRemoteEnv
    from .client_requests import open_session

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
