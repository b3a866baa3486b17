"""An env file's ``config.mcp`` as validated settings (:class:`McpSettings`); the session that
runs them is :mod:`rolloutgym_workflow.mcp_session`."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["McpSettings"]


@dataclass(frozen=True)
class McpSettings:
    """A validated ``config.mcp`` (see :class:`rolloutgym_workflow._shapes.McpConfig`)."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    protocol: str = "auto"
    per_episode: bool = True
    timeout: float = 30.0
    call_timeout: float = 60.0
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    state_tool: str | None = None
    state_arguments: Mapping[str, Any] = field(default_factory=dict)
    reset_tool: str | None = None
    reset_arguments: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> McpSettings:
        """Settings from ``config["mcp"]`` (already validated by the template's shape)."""
        command = config.get("command")
        if isinstance(command, str):
            command = shlex.split(command)
        url = config.get("url")
        include = config.get("include")
        return cls(
            command=None if command is None else tuple(command),
            url=url,
            env=dict(config.get("env") or {}),
            cwd=config.get("cwd"),
            headers=dict(config.get("headers") or {}),
            # HTTP: the initialize handshake, so the server gives each episode its own Mcp-Session-Id.
            protocol=config.get("protocol") or ("legacy" if url is not None else "auto"),
            per_episode=bool(config.get("per_episode", True)),
            timeout=float(config.get("timeout", 30.0)),
            call_timeout=float(config.get("call_timeout", 60.0)),
            include=None if include is None else tuple(include),
            exclude=tuple(config.get("exclude") or ()),
            state_tool=config.get("state_tool"),
            state_arguments=dict(config.get("state_arguments") or {}),
            reset_tool=config.get("reset_tool"),
            reset_arguments=dict(config.get("reset_arguments") or {}),
        )

    def describe(self) -> str:
        """The server as a user wrote it: ``command `python -m x``` or ``url http://...``."""
        if self.command is not None:
            return f"command `{shlex.join(self.command)}`"
        return f"url {self.url}"

    def hidden_tools(self) -> set[str]:
        """Server tools the agent never sees: the state and reset tools (grading and episode setup)."""
        return {name for name in (self.state_tool, self.reset_tool) if name}
