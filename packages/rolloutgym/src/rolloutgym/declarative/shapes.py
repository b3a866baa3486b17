"""Pydantic validation of the template config shapes, with errors that give the path.

``validate_config(template, config)`` checks a config against the rollout SDK's shape for
that template and raises :class:`~rolloutgym_protocol.errors.EnvFileError` listing every
problem as ``config.tools[2].paramsSchema.amount: unknown type 'nubmer'``. Templates this
module does not know (a third-party plugin's) are checked by their plugin at compile time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator
from rolloutgym_protocol.errors import EnvFileError, did_you_mean

from .params import check_param_type, is_full_json_schema
from .templating import TemplateError, check_template

__all__ = [
    "BrowserConfig",
    "BrowserPage",
    "CodeEditingConfig",
    "CustomConfig",
    "CustomTool",
    "LookupTool",
    "ActionTool",
    "MockTool",
    "Mutation",
    "WorkflowConfig",
    "format_errors",
    "validate_config",
    "validate_model",
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


class WorkflowConfig(_Shape):
    """``workflow`` config: tools, read-only fixtures, initial mutable state."""

    tools: list[dict[str, Any]] = Field(min_length=1)
    fixtures: dict[str, Any] = Field(default_factory=dict)
    initialMutableState: dict[str, Any] = Field(default_factory=dict)
    description: str | None = None
    defaultVerifier: dict[str, Any] | None = None


class CustomConfig(_Shape):
    """``custom`` config: tools and the initial state."""

    tools: list[dict[str, Any]] = Field(min_length=1)
    initialState: dict[str, Any] = Field(default_factory=dict)
    description: str | None = None
    defaultVerifier: dict[str, Any] | None = None


class CodeEditingConfig(BaseModel):
    """``code-editing`` config: ``files`` (path -> content). Extra keys belong to the plugin."""

    model_config = ConfigDict(extra="allow", frozen=True)
    files: dict[str, str]
    description: str | None = None
    defaultVerifier: dict[str, Any] | None = None


class BrowserPage(BaseModel):
    """One page of the ``browser`` template; the element schema is the plugin's."""

    model_config = ConfigDict(extra="allow", frozen=True)
    url: str = Field(min_length=1)
    title: str
    elements: list[Any]


class BrowserConfig(BaseModel):
    """``browser`` config: ``initialUrl`` and ``pages``. Extra keys belong to the plugin."""

    model_config = ConfigDict(extra="allow", frozen=True)
    initialUrl: str = Field(min_length=1)
    pages: list[BrowserPage] = Field(min_length=1)
    description: str | None = None
    defaultVerifier: dict[str, Any] | None = None


_TOOL_KINDS: dict[str, type[_ToolBase]] = {"lookup": LookupTool, "action": ActionTool, "mock": MockTool}


def _path(location: tuple[Any, ...], prefix: str) -> str:
    text = prefix
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "__schema__":
            continue
        else:
            text += f".{part}" if text else str(part)
    return text


def format_errors(exc: ValidationError, prefix: str, model: type[BaseModel] | None = None) -> list[str]:
    """One ``path: message`` line per pydantic error."""
    lines = []
    for error in exc.errors(include_url=False):
        location = tuple(error["loc"])
        message = str(error["msg"])
        if message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        if error["type"] == "extra_forbidden":
            known = list(model.model_fields) if model is not None and len(location) == 1 else []
            message = f"unknown field {str(location[-1])!r}.{did_you_mean(str(location[-1]), known)}"
            if known:
                message += f" Known fields: {', '.join(known)}."
        elif error["type"] == "string_pattern_mismatch" and location and location[-1] == "name":
            message = f"tool name {error.get('input')!r:.70} must be 1-64 letters, digits, '_' or '-'"
        elif error["type"] == "missing":
            message = "required field is missing"
        lines.append(f"{_path(location, prefix)}: {message}")
    return lines


def validate_model(model: type[BaseModel], data: Any, prefix: str) -> tuple[BaseModel | None, list[str]]:
    """Validate ``data`` with ``model``; returns the model (or None) and the error lines."""
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, format_errors(exc, prefix, model)


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
                    f"{where}.kind: unknown tool kind {kind!r}.{did_you_mean(str(kind), kinds)} Use one of: {', '.join(kinds)}"
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
                f"{where}: a lookup tool needs either 'fromArray' (+ 'matchField') or 'fixturePath', not both or neither"
            ]
        if tool.fromArray is not None and not tool.matchField:
            return [f"{where}.matchField: required with 'fromArray' (the field compared to the argument)"]
    if isinstance(tool, ActionTool):
        if (tool.stateArray is None) == (tool.appendTo is None):
            return [
                f"{where}: an action tool needs either 'stateArray' or 'appendTo' (+ optional 'value'), not both or neither"
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
                f"{prefix}.tools[{index}]: '{target}' is a read-only fixture; declare it in initialMutableState to write to it"
            )
    return errors


def validate_config(template: str, config: Any, *, prefix: str = "config") -> dict[str, Any]:
    """Check ``config`` against ``template``'s shape and return it (unchanged).

    Raises:
        EnvFileError: every problem found, one ``path: message`` per line.
    """
    if not isinstance(config, Mapping):
        raise EnvFileError(f"{prefix}: the {template} template needs a JSON object, got {type(config).__name__}")
    models: dict[str, type[BaseModel]] = {
        "workflow": WorkflowConfig,
        "custom": CustomConfig,
        "code-editing": CodeEditingConfig,
        "browser": BrowserConfig,
    }
    model = models.get(template)
    if model is None:
        return dict(config)
    validated, errors = validate_model(model, config, prefix)
    if validated is not None:
        if isinstance(validated, WorkflowConfig):
            errors += _check_tools(validated.tools, prefix, _TOOL_KINDS)
            errors += _check_state_names(validated, prefix)
        elif isinstance(validated, CustomConfig):
            errors += _check_tools(validated.tools, prefix, None)
    if errors:
        raise EnvFileError(_join(errors))
    return dict(config)


def _join(errors: list[str]) -> str:
    if len(errors) == 1:
        return errors[0]
    return f"{len(errors)} problems:\n  " + "\n  ".join(errors)
