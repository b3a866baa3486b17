"""The ``workflow`` and ``custom`` config shapes (pydantic), checked with errors that give the path.

The core calls these through the registry: each ``TemplateSpec`` names its ``validator``
(``validate_workflow`` / ``validate_custom``), which raises
:class:`~rolloutgym_protocol.errors.EnvFileError` listing every problem as
``config.tools[2].paramsSchema.amount: unknown type 'nubmer'``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from rolloutgym.declarative.params import check_param_type, is_full_json_schema
from rolloutgym.declarative.shapes import join_errors, validate_model
from rolloutgym.declarative.templating import TemplateError, check_template
from rolloutgym_protocol.errors import EnvFileError, did_you_mean

__all__ = [
    "ActionTool",
    "CustomConfig",
    "CustomTool",
    "LookupTool",
    "McpConfig",
    "MockTool",
    "Mutation",
    "WorkflowConfig",
    "validate_custom",
    "validate_workflow",
]

_TOOL_NAME = r"^[A-Za-z0-9_-]{1,64}$"


def _template(value: Any) -> Any:
    try:
        check_template(value)
    except TemplateError as exc:
        raise ValueError(str(exc)) from None
    return value


ParamType = Annotated[Any, AfterValidator(check_param_type)]
Template = Annotated[Any, AfterValidator(_template)]


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ToolBase(_Shape):
    name: str = Field(pattern=_TOOL_NAME)
    description: str | None = None
    paramsSchema: dict[str, ParamType] | None = None

    @field_validator("paramsSchema", mode="before")
    @classmethod
    def _full_schema(cls, value: Any) -> Any:
        # A complete JSON schema is passed through; only the shorthand is checked per argument.
        if isinstance(value, Mapping) and is_full_json_schema(value):
            return {"__schema__": dict(value)}
        return value


class LookupTool(_ToolBase):
    """``kind: lookup``: ``fromArray`` + ``matchField`` (builder) or ``fixturePath`` (raw)."""

    kind: Literal["lookup"]
    fromArray: str | None = None
    matchField: str | None = None
    fixturePath: Template | None = None


class ActionTool(_ToolBase):
    """``kind: action``: ``stateArray`` (builder) or ``appendTo`` + optional ``value`` template (raw)."""

    kind: Literal["action"]
    stateArray: str | None = None
    appendTo: str | None = None
    value: Template | None = None
    response: Template | None = None


class MockTool(_ToolBase):
    """``kind: mock``: returns ``response``."""

    kind: Literal["mock"]
    response: Template = None


class Mutation(_Shape):
    """``mutates``: set (or with a trailing ``[]``, append to) ``path`` in the state."""

    path: Template = Field(min_length=1)
    value: Template | None = None


class CustomTool(_ToolBase):
    """A ``custom`` template tool: templated ``response``, optional ``mutates``."""

    response: Template = None
    mutates: Mutation | list[Mutation] | None = None


class McpConfig(_Shape):
    """``mcp``: tools from an MCP server, started per episode (``command``) or reached at ``url``.

    See ``docs/how-to/mcp-tools-in-env-files.md``; :mod:`rolloutgym_workflow.mcp_session` runs it.
    """

    command: list[Annotated[str, Field(min_length=1)]] | Annotated[str, Field(min_length=1)] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    protocol: Literal["auto", "legacy"] | None = None
    per_episode: bool = True
    timeout: float = Field(default=30.0, gt=0, le=3600)
    call_timeout: float = Field(default=60.0, gt=0, le=3600)
    include: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)
    state_tool: str | None = None
    state_arguments: dict[str, Any] = Field(default_factory=dict)
    reset_tool: str | None = None
    reset_arguments: dict[str, Any] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r:.80} is not an http(s):// URL of a streamable HTTP MCP server")
        return value

    @model_validator(mode="after")
    def _one_server(self) -> McpConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                "give the MCP server either 'command' (a stdio server started per episode, e.g. "
                '["python", "-m", "my_server"]) or \'url\' (a streamable HTTP server, e.g. '
                '"http://127.0.0.1:9000/mcp"), not both or neither'
            )
        if self.command == []:
            raise ValueError("'command' is empty: give the executable and its arguments")
        if self.url is not None and (self.env or self.cwd is not None):
            raise ValueError("'env' and 'cwd' are for a 'command' server; an HTTP server takes 'headers'")
        if self.command is not None and self.headers:
            raise ValueError("'headers' are for a 'url' server; a 'command' server takes 'env'")
        if self.include is not None and set(self.include) & set(self.exclude):
            raise ValueError(f"tools both included and excluded: {sorted(set(self.include) & set(self.exclude))}")
        return self


class WorkflowConfig(_Shape):
    """``workflow`` config: tools, read-only fixtures, initial mutable state (and optionally an MCP server)."""

    tools: list[dict[str, Any]] = Field(default_factory=list)
    mcp: McpConfig | None = None
    fixtures: dict[str, Any] = Field(default_factory=dict)
    initialMutableState: dict[str, Any] = Field(default_factory=dict)
    description: str | None = None
    defaultVerifier: dict[str, Any] | None = None


class CustomConfig(_Shape):
    """``custom`` config: tools and the initial state (and optionally an MCP server)."""

    tools: list[dict[str, Any]] = Field(default_factory=list)
    mcp: McpConfig | None = None
    initialState: dict[str, Any] = Field(default_factory=dict)
    description: str | None = None
    defaultVerifier: dict[str, Any] | None = None


_TOOL_KINDS: dict[str, type[_ToolBase]] = {"lookup": LookupTool, "action": ActionTool, "mock": MockTool}


def _check_tools(tools: list[Any], prefix: str, kinds: dict[str, type[_ToolBase]] | None) -> list[str]:
    errors: list[str] = []
    seen: dict[str, int] = {}
    for index, tool in enumerate(tools):
        where = f"{prefix}.tools[{index}]"
        if not isinstance(tool, Mapping):
            errors.append(f"{where}: a tool must be a JSON object, got {type(tool).__name__}")
            continue
        if kinds is None:
            model: type[_ToolBase] = CustomTool
        else:
            kind = tool.get("kind")
            if kind not in kinds:
                errors.append(
                    f"{where}.kind: unknown tool kind {kind!r}.{did_you_mean(str(kind), kinds)} "
                    f"Use one of: {', '.join(kinds)}"
                )
                continue
            model = kinds[kind]
        validated: Any
        validated, problems = validate_model(model, tool, where)
        errors += problems
        if validated is None:
            continue
        errors += _tool_rules(validated, where)
        if validated.name in seen:
            errors.append(f"{where}.name: duplicate tool name {validated.name!r} (also tools[{seen[validated.name]}])")
        seen.setdefault(validated.name, index)
    return errors


def _tool_rules(tool: _ToolBase, where: str) -> list[str]:
    if isinstance(tool, LookupTool):
        if (tool.fromArray is None) == (tool.fixturePath is None):
            return [
                f"{where}: a lookup tool needs either 'fromArray' (+ 'matchField') or 'fixturePath', "
                "not both or neither"
            ]
        if tool.fromArray is not None and not tool.matchField:
            return [f"{where}.matchField: required with 'fromArray' (the field compared to the argument)"]
    if isinstance(tool, ActionTool):
        if (tool.stateArray is None) == (tool.appendTo is None):
            return [
                f"{where}: an action tool needs either 'stateArray' or 'appendTo' (+ optional 'value'), "
                "not both or neither"
            ]
        if tool.stateArray is not None and tool.value is not None:
            return [f"{where}.value: only used with 'appendTo'"]
    return []


def _check_state_names(config: WorkflowConfig, prefix: str) -> list[str]:
    errors = []
    for index, tool in enumerate(config.tools):
        target = tool.get("stateArray") or tool.get("appendTo")
        if target is not None and target in config.fixtures and target not in config.initialMutableState:
            errors.append(
                f"{prefix}.tools[{index}]: '{target}' is a read-only fixture; "
                "declare it in initialMutableState to write to it"
            )
    return errors


def _check_tool_source(config: WorkflowConfig | CustomConfig, prefix: str) -> list[str]:
    """Tools come from ``tools``, an ``mcp`` server, or both; never from nowhere."""
    if config.tools or config.mcp is not None:
        return []
    return [f"{prefix}.tools: give at least one tool, or take the tools from an MCP server with 'mcp'"]


def validate_workflow(config: Mapping[str, Any], prefix: str = "config") -> dict[str, Any]:
    """Check a ``workflow`` config and return it (unchanged).

    Raises:
        EnvFileError: every problem found, one ``path: message`` per line.
    """
    validated, errors = validate_model(WorkflowConfig, config, prefix)
    if isinstance(validated, WorkflowConfig):
        errors += _check_tool_source(validated, prefix)
        errors += _check_tools(validated.tools, prefix, _TOOL_KINDS)
        errors += _check_state_names(validated, prefix)
    if errors:
        raise EnvFileError(join_errors(errors))
    return dict(config)


def validate_custom(config: Mapping[str, Any], prefix: str = "config") -> dict[str, Any]:
    """Check a ``custom`` config and return it (unchanged).

    Raises:
        EnvFileError: every problem found, one ``path: message`` per line.
    """
    validated, errors = validate_model(CustomConfig, config, prefix)
    if isinstance(validated, CustomConfig):
        errors += _check_tool_source(validated, prefix)
        errors += _check_tools(validated.tools, prefix, None)
    if errors:
        raise EnvFileError(join_errors(errors))
    return dict(config)
