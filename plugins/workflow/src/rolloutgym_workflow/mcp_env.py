"""``McpWorkflowEnv``: a ``workflow``/``custom`` env file whose tools (some or all) come from an MCP server.

The env is an :class:`~rolloutgym_protocol.AsyncEnv`. At every reset it opens an MCP session on its
event loop
(``config.mcp.command``: a new server process; ``url``: a new session) and lists the
server's tools; each tool call of the model is checked against the tool's ``inputSchema``
and sent as ``tools/call``; the result's text is the tool message, ``isError`` results are
``error: ...`` tool messages. When the episode ends (or the env closes, also after an error)
the session closes and a stdio server process is stopped. Everything else (local tools
next to the server's, conversations with a simulated user, verifiers, the oracle replaying
``reference_actions``) is :class:`~rolloutgym_workflow.envs.WorkflowEnv`'s.

With ``config.mcp.state_tool`` the server's state is read (that tool, called with
``state_arguments``) before grading, and verifiers see it over the local state, so
``state_match`` and ``ground_truth_match`` check what the server holds.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rolloutgym.declarative import Task
from rolloutgym_protocol import AsyncEnv
from rolloutgym_protocol.errors import EnvClosedError, EnvFileError, did_you_mean

from ._arguments import ArgumentChecker, compile_checker
from .envs import _RESPOND_DEFINITION, Messages, WorkflowEnv, _is_respond
from .mcp_results import McpToolResult
from .mcp_session import McpServerError, McpSession, run_on, run_on_mcp_loop, run_on_mcp_loop_sync
from .mcp_settings import McpSettings
from .user import RESPOND_TOOL

__all__ = ["McpTool", "McpToolSource", "McpWorkflowEnv"]

StepResult = tuple[Messages, float, bool, bool, dict[str, Any]]


@dataclass(frozen=True)
class McpTool:
    """One MCP server tool as the model sees it: its definition and an argument check (its ``inputSchema``)."""

    name: str
    definition: dict[str, Any]
    check: ArgumentChecker


def _object_only(arguments: dict[str, Any]) -> str | None:
    return None


def _checker(schema: Mapping[str, Any]) -> ArgumentChecker:
    try:
        return compile_checker(schema)
    except (ValueError, TypeError):  # the server's schema is not valid JSON schema: the server checks
        return _object_only


def _convert(tool: Any) -> McpTool:
    schema = dict(getattr(tool, "input_schema", None) or {"type": "object", "properties": {}})
    definition = {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description or tool.name.replace("_", " "),
            "parameters": schema,
        },
    }
    return McpTool(tool.name, definition, _checker(schema))


class McpToolSource:
    """An env file's MCP server for all the episodes of that env: settings, tool listing, shared session.

    Args:
        settings: ``config.mcp``.
        local_tools: the names of the env file's own tools (a server tool with the same name is an error).
        slug: the environment's slug (for messages).
    """

    def __init__(self, settings: McpSettings, local_tools: set[str], slug: str) -> None:
        self.settings = settings
        self.local_tools = set(local_tools)
        self.slug = slug
        self._probe_lock = threading.Lock()
        self._listing: dict[str, McpTool] | None = None
        self._shared: McpSession | None = None
        self._shared_lock: asyncio.Lock | None = None

    def select(self, listed: list[Any]) -> dict[str, McpTool]:
        """The server's tools the agent gets (``include``/``exclude``; state and reset tools hidden).

        Raises:
            EnvFileError: a configured tool name the server does not have, or a server tool
                named like one of the env file's own tools.
        """
        settings = self.settings
        names = [tool.name for tool in listed]
        where = f"environment {self.slug!r}: config.mcp"
        errors = []
        for key, wanted in (
            ("include", list(settings.include or ())),
            ("exclude", list(settings.exclude)),
            ("state_tool", [settings.state_tool] if settings.state_tool else []),
            ("reset_tool", [settings.reset_tool] if settings.reset_tool else []),
        ):
            for name in wanted:
                if name not in names:
                    errors.append(
                        f"{where}.{key}: the server has no tool {name!r}.{did_you_mean(name, names)} "
                        f"Its tools: {', '.join(names) or 'none'}"
                    )
        include = set(settings.include) if settings.include is not None else None
        hidden = set(settings.exclude) | (settings.hidden_tools() - (include or set()))
        chosen = [tool for tool in listed if tool.name not in hidden and (include is None or tool.name in include)]
        for tool in chosen:
            if tool.name in self.local_tools or tool.name == RESPOND_TOOL:
                errors.append(
                    f"{where}: the server's tool {tool.name!r} has the name of "
                    + ("the conversation tool" if tool.name == RESPOND_TOOL else "a tool in config.tools")
                    + "; rename the local tool or leave the server's out with config.mcp.exclude"
                )
        if errors:
            raise EnvFileError(errors[0] if len(errors) == 1 else f"{len(errors)} problems:\n  " + "\n  ".join(errors))
        tools = {tool.name: _convert(tool) for tool in chosen}
        self._listing = tools
        return tools

    def tools_before_reset(self) -> dict[str, McpTool]:
        """The server's tools before any episode listed them (starts the server once, then cached)."""
        with self._probe_lock:
            if self._listing is None:
                session = McpSession(self.settings)
                try:
                    listed = run_on_mcp_loop_sync(session.open(), self.settings.timeout + 30.0)
                finally:
                    run_on_mcp_loop_sync(session.close(), 60.0)
                self.select(listed)
            assert self._listing is not None
            return self._listing

    async def open_episode(self) -> tuple[McpSession, dict[str, McpTool]]:
        """The session of one episode (a new one, or the shared one when ``per_episode`` is false)."""
        if self.settings.per_episode:
            session = McpSession(self.settings)  # owned by this episode's loop
            try:
                tools = self.select(await session.open())
            except BaseException:  # also a reset cancelled by a run's timeout: stop the server
                await asyncio.shield(session.close())
                raise
        else:
            session, tools = await run_on_mcp_loop(self._shared_session())
        if self.settings.reset_tool:
            outcome = await run_on(session.loop, session.call(self.settings.reset_tool, self.settings.reset_arguments))
            if outcome.is_error:
                if self.settings.per_episode:
                    await session.close()
                raise McpServerError(
                    f"environment {self.slug!r}: the MCP server's reset tool {self.settings.reset_tool!r} failed: "
                    f"{outcome.text:.500}"
                )
        return session, tools

    async def _shared_session(self) -> tuple[McpSession, dict[str, McpTool]]:
        """On the MCP loop: the one session every episode uses (reopened when it died)."""
        if self._shared_lock is None:
            self._shared_lock = asyncio.Lock()
        async with self._shared_lock:
            shared = self._shared
            if shared is None or not shared.alive:
                shared = McpSession(self.settings)
                listed = await shared.open()
                self.select(listed)
                self._shared = shared
            assert self._listing is not None
            return shared, self._listing

    @property
    def shared_session(self) -> McpSession | None:
        """The session every episode uses when ``per_episode`` is false (None before the first reset)."""
        return self._shared

    async def close_shared(self) -> None:
        """Close the shared session (from any loop); the next reset opens a new one. At exit this happens anyway."""
        shared, self._shared = self._shared, None
        if shared is not None:
            await run_on(shared.loop, shared.close())

    async def end_episode(self, session: McpSession) -> None:
        """Close an episode's session (a shared session stays open for the next episode)."""
        if self.settings.per_episode or not session.alive:
            await run_on(session.loop, session.close())


class McpWorkflowEnv(AsyncEnv[Messages, dict[str, Any]]):
    """One task of a ``workflow``/``custom`` env file with ``config.mcp`` (see the module docstring).

    Takes the same options as :class:`~rolloutgym_workflow.envs.WorkflowEnv`.
    """

    fork_note = "its tools run in an MCP server process, whose state cannot be copied"

    def __init__(self, program: Any, task: Task | None, **kwargs: Any) -> None:
        self.core = WorkflowEnv(program, task, **kwargs)
        self.program = program
        self.source: McpToolSource = program.mcp
        self.session: McpSession | None = None
        self._dirty = False
        self._closed = False

    # -- what policies read -----------------------------------------------------------

    @property
    def task(self) -> Task:
        return self.core.task  # type: ignore[return-value]

    @property
    def observation_space(self) -> Any:  # type: ignore[override]
        return self.core.observation_space

    @property
    def action_space(self) -> Any:  # type: ignore[override]
        return self.core.action_space

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool definitions: the env file's own, then the server's (listed at reset; before it, probed once)."""
        if not self.core.extra_tools:
            self._expose(self.source.tools_before_reset())
        return self.core.tools

    @property
    def records(self) -> Any:
        return self.core.records

    def final_state(self) -> dict[str, Any]:
        return self.core.final_state()

    def oracle_action(self) -> dict[str, Any]:
        """The task's ``reference_actions`` (gold tool calls, the server's among them), then its answer."""
        return self.core.oracle_action()

    def null_action(self) -> dict[str, Any]:
        return self.core.null_action()

    def _expose(self, tools: dict[str, McpTool]) -> None:
        core = self.core
        core.extra_tools = dict(tools)
        definitions = [*self.program.definitions, *(tool.definition for tool in tools.values())]
        core.tools = definitions if core.user_section is None else [*definitions, _RESPOND_DEFINITION]

    # -- episode ----------------------------------------------------------------------

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Messages, dict[str, Any]]:
        await super().reset(seed=seed, options=options)
        if self._closed:
            raise EnvClosedError(f"environment {self.program.slug!r} is closed; create a new one")
        await self._end_session()
        self.session, tools = await self.source.open_episode()
        self._expose(tools)
        self.core.external_state = None
        observation, info = self.core.reset(seed=seed, options=options)
        self._dirty = self.source.settings.state_tool is not None
        return observation, info

    async def step(self, action: Any) -> StepResult:
        core = self.core
        kind, value = core._begin(action)
        if kind != "calls":
            if kind != "invalid":
                await self._read_state()
            return await self._ended(core._conclude(kind, value))
        observations: Messages = []
        responses: list[str] = []
        for call in value:
            if core.user is not None and _is_respond(call):
                observation, message = core._respond(call)
                observations.append(observation)
                if message is not None:
                    responses.append(message)
            else:
                observations.append(await self._call(call))
        if responses:
            await self._read_state()
        return await self._ended(core._after_calls(observations, responses))

    async def _call(self, call: Any) -> dict[str, Any]:
        core = self.core
        prepared = core._prepare(call)
        if type(prepared) is dict:
            return prepared
        tool, call_id, arguments = prepared  # type: ignore[misc]
        if not isinstance(tool, McpTool):
            return core._run_local(tool, call_id, arguments)
        outcome = await self._server_call(tool.name, arguments)
        self._dirty = True
        if outcome.is_error:
            return core._fail_call(tool.name, call_id, outcome.text, invalid=False, arguments=arguments)
        return core._succeed(tool.name, call_id, arguments, outcome.value, content=outcome.text)

    async def _server_call(self, name: str, arguments: Mapping[str, Any]) -> McpToolResult:
        if self.session is None:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        return await run_on(self.session.loop, self.session.call(name, arguments))

    async def _read_state(self) -> None:
        """Read the server's state with ``state_tool`` when a call may have changed it."""
        settings = self.source.settings
        if not self._dirty or not settings.state_tool:
            return
        outcome = await self._server_call(settings.state_tool, settings.state_arguments)
        value = outcome.value
        if outcome.is_error or not isinstance(value, dict):
            problem = (
                f"failed: {outcome.text:.500}"
                if outcome.is_error
                else f"returned {type(value).__name__}, not a JSON object (structured content or JSON text)"
            )
            raise McpServerError(
                f"environment {self.program.slug!r}: the MCP server's state tool {settings.state_tool!r} {problem}"
            )
        self.core.external_state = value
        self._dirty = False

    async def _ended(self, result: StepResult) -> StepResult:
        if result[2] or result[3]:
            await self._end_session()
        return result

    async def _end_session(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            # Shielded: a cancelled episode (a run's timeout) still stops the server.
            await asyncio.shield(self.source.end_episode(session))

    async def close(self) -> None:
        """End the episode's session (a stdio server process is stopped); safe to call more than once."""
        self._closed = True
        await self._end_session()
        self.core.close()

    def __repr__(self) -> str:
        return f"<McpWorkflowEnv {self.program.slug!r} task={getattr(self.core.task, 'id', None)!r}>"
