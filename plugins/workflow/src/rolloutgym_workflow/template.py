"""The ``workflow`` and ``custom`` template compilers (``rolloutgym_templates`` entry points).

``compile_workflow(environment)`` validates the config, compiles every tool once and returns
``factory(task, **kwargs) -> WorkflowEnv``; each env gets a fresh copy of the mutable state
at every reset, while fixtures are shared and never written.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rolloutgym.declarative import Environment, Task, validate_config
from rolloutgym.verifiers import Verifier, build_verifier
from rolloutgym_protocol.errors import EnvFileError

from ._tools import CompiledTool, compile_custom_tool, compile_workflow_tool

__all__ = ["Program", "compile_custom", "compile_program", "compile_workflow"]


def _freeze(value: Any) -> Any:
    """A deep copy the env never mutates (fixtures)."""
    return copy.deepcopy(value)


@dataclass(frozen=True)
class Program:
    """A compiled declarative environment: tools, fixtures, initial state, verifier and prompt."""

    name: str
    slug: str
    template: str
    description: str | None
    tools: dict[str, CompiledTool]
    fixtures: Mapping[str, Any]
    initial_state: Mapping[str, Any]
    verifier: Verifier
    definitions: list[dict[str, Any]] = field(default_factory=list)
    mcp: Any = None  # an McpToolSource when config.mcp names an MCP server

    @functools.cached_property
    def system_prompt(self) -> str:
        """The system message: the SDK's agent prompt, then the environment's description (its rules)."""
        prompt = (
            f"You are an autonomous agent operating in the '{self.name}' environment. Use the provided tools to "
            "complete the task. When done, produce a clear final answer."
        )
        return prompt + ("\n\n" + self.description if self.description else "")

    @functools.cached_property
    def _initial_json(self) -> str | None:
        try:
            return json.dumps(self.initial_state)
        except (TypeError, ValueError):
            return None

    def fresh_state(self) -> dict[str, Any]:
        """A new mutable state for one episode (a JSON round trip when possible: faster than deepcopy)."""
        encoded = self._initial_json
        return json.loads(encoded) if encoded is not None else copy.deepcopy(dict(self.initial_state))


def compile_program(environment: Environment, *, registry: Any = None) -> Program:
    """Validate and compile a ``workflow`` or ``custom`` environment."""
    config = validate_config(environment.template, environment.config)
    if environment.template == "workflow":
        tools = [compile_workflow_tool(tool) for tool in config.get("tools") or []]
        fixtures = _freeze(config.get("fixtures") or {})
        initial = _freeze(config.get("initialMutableState") or {})
    elif environment.template == "custom":
        tools = [compile_custom_tool(tool) for tool in config.get("tools") or []]
        fixtures = {}
        initial = _freeze(config.get("initialState") or {})
    else:
        raise ValueError(
            f"rolloutgym-workflow compiles the 'workflow' and 'custom' templates, not {environment.template!r}"
        )
    path = "verifier" if environment.verifier is not None else "config.defaultVerifier"
    verifier = build_verifier(environment.verifier_config, registry=registry, path=path)
    description = environment.description or config.get("description")
    mcp = _mcp_source(config.get("mcp"), tools, environment.slug)
    return Program(
        name=environment.name or environment.slug,
        slug=environment.slug,
        template=environment.template,
        description=description,
        tools={tool.name: tool for tool in tools},
        fixtures=fixtures,
        initial_state=initial,
        verifier=verifier,
        definitions=[tool.definition for tool in tools],
        mcp=mcp,
    )


def _mcp_source(config: Any, tools: list[CompiledTool], slug: str) -> Any:
    """The env file's MCP server (``config.mcp``), or None; needs the ``mcp`` SDK."""
    if config is None:
        return None
    from .mcp_session import require_mcp
    from .mcp_settings import McpSettings

    try:
        require_mcp()
    except ImportError as exc:
        raise EnvFileError(f"environment {slug!r}: config.mcp: {exc}") from None
    from .mcp_env import McpToolSource

    return McpToolSource(McpSettings.from_config(config), {tool.name for tool in tools}, slug)


def _factory(program: Program) -> Callable[..., Any]:
    from .envs import WorkflowEnv

    if program.mcp is not None:
        from .mcp_env import McpWorkflowEnv

        def make_mcp(task: Task | None = None, **kwargs: Any) -> McpWorkflowEnv:
            return McpWorkflowEnv(program, task, **kwargs)

        return make_mcp

    def make(task: Task | None = None, **kwargs: Any) -> WorkflowEnv:
        return WorkflowEnv(program, task, **kwargs)

    return make


def compile_workflow(environment: Environment) -> Callable[..., Any]:
    """``workflow`` template: ``factory(task, max_tool_calls=20, judge=None) -> WorkflowEnv``.

    With ``config.mcp`` the factory makes (async) :class:`~rolloutgym_workflow.mcp_env.McpWorkflowEnv` envs.
    """
    return _factory(compile_program(environment))


def compile_custom(environment: Environment) -> Callable[..., Any]:
    """``custom`` template: ``factory(task, max_tool_calls=20, judge=None) -> WorkflowEnv`` (or ``McpWorkflowEnv``)."""
    return _factory(compile_program(environment))
