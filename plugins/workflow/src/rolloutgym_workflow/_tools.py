"""Compiling declarative tool definitions into callables over a state and fixtures.

A compiled tool is ``tool.run(arguments, state, fixtures) -> result``; a problem the model
can fix (not found, missing argument, write to a fixture) raises :class:`ToolError`, which
the environment returns as a tool error message.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rolloutgym.declarative import expand_params_schema, interpolate
from rolloutgym.declarative.templating import TemplateError, compile_template, placeholders
from rolloutgym.verifiers import LENGTH, PathError, format_path, get_path, parse_path, set_path
from rolloutgym_protocol import jsonvalues
from rolloutgym_protocol.display import safe_repr, safe_str

from ._arguments import ArgumentChecker, compile_checker

__all__ = ["CompiledTool", "ToolError", "compile_custom_tool", "compile_workflow_tool"]

_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")


class ToolError(Exception):
    """A tool call failed in a way the model can read and fix."""


@dataclass(frozen=True)
class CompiledTool:
    """One tool: its OpenAI-style definition, argument checker and implementation."""

    name: str
    definition: dict[str, Any]
    check: ArgumentChecker
    run: Callable[[dict[str, Any], dict[str, Any], Mapping[str, Any]], Any]
    source: Mapping[str, Any] | None = None  # the tool's config, as written (the oracle derives calls from it)


def _definition(name: str, description: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description or name.replace("_", " "), "parameters": schema},
    }


def _schema_for(tool: Mapping[str, Any], templates: list[Any], *, free: bool) -> dict[str, Any]:
    """The argument schema: ``paramsSchema`` when given, else inferred from the placeholders."""
    declared = tool.get("paramsSchema")
    if declared is not None:
        return expand_params_schema(declared)
    names = sorted(set().union(*(placeholders(template) for template in templates))) if templates else []
    return {
        "type": "object",
        "properties": {name: {} for name in names},
        "required": names,
        "additionalProperties": free or not names,
    }


def _compile_path(template: str) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """Parse a path template once; placeholders fill whole segments (dots in values stay in the key)."""
    tokens: list[str] = []

    def keep(match: re.Match[str]) -> str:
        tokens.append(match.group(0))
        return f"\x00{len(tokens) - 1}\x00"

    shielded = _PLACEHOLDER.sub(keep, template)
    segments = parse_path(shielded)
    if not tokens:
        return lambda arguments: segments

    def restore(text: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda match: tokens[int(match.group(1))], text)

    templated: list[Any] = [restore(segment) if isinstance(segment, str) else segment for segment in segments]

    def fill(arguments: dict[str, Any]) -> tuple[Any, ...]:
        filled: list[Any] = []
        for segment in templated:
            if isinstance(segment, str) and "${" in segment:
                value = interpolate(segment, arguments)
                if isinstance(value, (dict, list)) or value is None:
                    raise ToolError(f"path segment {segment!r} needs a string or number argument")
                filled.append(safe_str(value))
            else:
                filled.append(segment)
        return tuple(filled)

    return fill


def _interpolated(template: Any, arguments: dict[str, Any]) -> Any:
    try:
        return interpolate(template, arguments)
    except TemplateError as exc:
        raise ToolError(str(exc)) from None


def _read(state: Mapping[str, Any], fixtures: Mapping[str, Any], segments: tuple[Any, ...]) -> tuple[bool, Any]:
    root = segments[0]
    source = state if root in state else fixtures
    return get_path(source, segments)


def _lookup_array(tool: Mapping[str, Any]) -> Callable[..., Any]:
    array_name, field = tool["fromArray"], tool["matchField"]
    indexes: dict[int, dict[Any, Any]] = {}

    def run(arguments: dict[str, Any], state: dict[str, Any], fixtures: Mapping[str, Any]) -> Any:
        if field in arguments:
            target = arguments[field]
        elif arguments:
            target = next(iter(arguments.values()))
        else:
            raise ToolError(f"give the value of '{field}' to look up")
        collection = state[array_name] if array_name in state else fixtures.get(array_name)
        if collection is None:
            raise ToolError(f"no '{array_name}' to look up in")
        if isinstance(collection, Mapping):  # a keyed fixture: {"O-1": {...}}
            if isinstance(target, str) and target in collection:
                return collection[target]
            raise ToolError(f"not found: no {array_name} entry {safe_repr(target)}")
        if array_name not in state:  # fixtures never change: index them once
            index = indexes.get(id(collection))
            if index is None:
                index = {}
                for entry in collection:
                    if isinstance(entry, Mapping) and field in entry:
                        key = (type(entry[field]), _key(entry[field]))
                        index.setdefault(key, entry)
                indexes[id(collection)] = index
            found = index.get((type(target), _key(target)))
            if found is not None:
                return found
        else:
            for entry in collection:
                if isinstance(entry, Mapping) and entry.get(field) == target and type(entry.get(field)) is type(target):
                    return entry
        raise ToolError(f"not found: no {array_name} entry with {field} = {safe_repr(target)}")

    return run


def _key(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return jsonvalues.dumps(value)  # exact (every digit) and never raises


def _lookup_path(tool: Mapping[str, Any]) -> Callable[..., Any]:
    fill = _compile_path(tool["fixturePath"])

    def run(arguments: dict[str, Any], state: dict[str, Any], fixtures: Mapping[str, Any]) -> Any:
        try:
            segments = fill(arguments)
        except TemplateError as exc:
            raise ToolError(str(exc)) from None
        found, value = _read(state, fixtures, segments)
        if not found:
            raise ToolError(f"not found: {format_path(segments)}")
        return value

    return run


def _filler(template: Any) -> Callable[[dict[str, Any]], Any]:
    compiled = compile_template(template)

    def fill(arguments: dict[str, Any]) -> Any:
        try:
            return compiled(arguments)
        except TemplateError as exc:
            raise ToolError(str(exc)) from None

    return fill


def _append(target: str, template: Any, response: Any) -> Callable[..., Any]:
    fill_value = None if template is None else _filler(template)
    fill_response = None if response is None else _filler(response)

    def run(arguments: dict[str, Any], state: dict[str, Any], fixtures: Mapping[str, Any]) -> Any:
        value = dict(arguments) if fill_value is None else fill_value(arguments)
        array = state.get(target)
        if array is None:
            array = state[target] = []
        elif not isinstance(array, list):
            raise ToolError(f"state '{target}' is not a list; cannot append")
        array.append(value)
        if fill_response is not None:
            return fill_response(arguments)
        return {"ok": True, **value} if isinstance(value, dict) else {"ok": True, "value": value}

    return run


def _mock(response: Any) -> Callable[..., Any]:
    templated = bool(placeholders(response))

    def run(arguments: dict[str, Any], state: dict[str, Any], fixtures: Mapping[str, Any]) -> Any:
        return _interpolated(response, arguments) if templated else copy.deepcopy(response)

    return run


def compile_workflow_tool(tool: Mapping[str, Any]) -> CompiledTool:
    """Compile one ``workflow`` tool (``lookup``, ``action`` or ``mock``; builder or raw shape)."""
    kind = tool["kind"]
    if kind == "lookup" and tool.get("fromArray") is not None:
        schema = (
            _schema_for(tool, [], free=False)
            if tool.get("paramsSchema") is not None
            else {
                "type": "object",
                "properties": {tool["matchField"]: {}},
                "required": [tool["matchField"]],
                "additionalProperties": False,
            }
        )
        run = _lookup_array(tool)
    elif kind == "lookup":
        schema = _schema_for(tool, [tool["fixturePath"]], free=False)
        run = _lookup_path(tool)
    elif kind == "action":
        target = tool.get("stateArray") or tool["appendTo"]
        value = tool.get("value")
        schema = _schema_for(tool, [value, tool.get("response")], free=value is None)
        run = _append(target, value, tool.get("response"))
    else:
        schema = _schema_for(tool, [tool.get("response")], free=False)
        run = _mock(tool.get("response"))
    return CompiledTool(
        tool["name"], _definition(tool["name"], tool.get("description"), schema), compile_checker(schema), run, tool
    )


def _mutation(mutation: Mapping[str, Any]) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    fill = _compile_path(mutation["path"])
    template = mutation.get("value")

    def apply(arguments: dict[str, Any], state: dict[str, Any]) -> None:
        try:
            segments = fill(arguments)
        except TemplateError as exc:
            raise ToolError(str(exc)) from None
        if segments[-1] is LENGTH:
            raise ToolError("cannot write to '.length'")
        value = dict(arguments) if template is None else _interpolated(template, arguments)
        try:
            set_path(state, segments, value)
        except PathError as exc:
            raise ToolError(f"cannot update the state: {exc}") from None

    return apply


def compile_custom_tool(tool: Mapping[str, Any]) -> CompiledTool:
    """Compile one ``custom`` tool: templated ``response``, then ``mutates`` applied in order."""
    raw = tool.get("mutates")
    mutations = [] if raw is None else raw if isinstance(raw, list) else [raw]
    templates = (
        [tool.get("response")] + [item.get("path") for item in mutations] + [item.get("value") for item in mutations]
    )
    free = any(item.get("value") is None for item in mutations)
    schema = _schema_for(tool, templates, free=free)
    appliers = [_mutation(item) for item in mutations]
    response = tool.get("response")

    def run(arguments: dict[str, Any], state: dict[str, Any], fixtures: Mapping[str, Any]) -> Any:
        result = {"ok": True} if response is None else _interpolated(response, arguments)
        # Apply to a scratch copy first so a failing mutation leaves the state untouched.
        if appliers:
            scratch = copy.deepcopy(state) if len(appliers) > 1 else state
            for apply in appliers:
                apply(arguments, scratch)
            if scratch is not state:
                state.clear()
                state.update(scratch)
        return result

    return CompiledTool(
        tool["name"], _definition(tool["name"], tool.get("description"), schema), compile_checker(schema), run
    )
