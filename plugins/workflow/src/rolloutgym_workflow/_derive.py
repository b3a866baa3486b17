"""Reference actions derived from a task's ``hidden_ground_truth`` (the oracle of ported SDK env files).

An env file written for the rollout SDK gives each task its expected end state
(``hidden_ground_truth``), not a reference solution. For the ``workflow`` template that
state is usually made by action tools appending entries to state arrays, so the calls that
make it can be read back: for every entry the expected state adds to an array, the action
tool that appends to that array, with the arguments that fill its ``value`` template (or the
entry itself for ``stateArray``), preceded by lookups of the fixture entries those arguments
name. When any entry cannot be produced that way, there is no derived solution (``None``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["derive_reference_actions"]

_WHOLE = re.compile(r"^\$\{args\.([A-Za-z_][A-Za-z0-9_]*)\}$")


def _invert(template: Any, value: Any, arguments: dict[str, Any]) -> bool:
    """Fill ``arguments`` so that ``template`` renders to ``value``; False when impossible."""
    if isinstance(template, str):
        match = _WHOLE.match(template)
        if match:
            name = match.group(1)
            if name in arguments and arguments[name] != value:
                return False
            arguments[name] = value
            return True
        return template == value and "${" not in template
    if isinstance(template, Mapping):
        if not isinstance(value, Mapping) or set(template) != set(value):
            return False
        return all(_invert(template[key], value[key], arguments) for key in template)
    if isinstance(template, list):
        if not isinstance(value, list) or len(template) != len(value):
            return False
        return all(_invert(item, part, arguments) for item, part in zip(template, value, strict=True))
    return template == value


def _writer_calls(program: Any, key: str, entry: Any) -> dict[str, Any] | None:
    for tool in program.tools.values():
        source = tool.source or {}
        if source.get("kind") != "action" or (source.get("stateArray") or source.get("appendTo")) != key:
            continue
        template = source.get("value")
        if template is None:
            arguments = dict(entry) if isinstance(entry, Mapping) else None
        else:
            arguments = {}
            if not _invert(template, entry, arguments):
                arguments = None
        if arguments is not None and tool.check(arguments) is None:
            return {"name": tool.name, "arguments": arguments}
    return None


def _lookups(program: Any, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Lookups of the fixture entries the arguments of a write name (what an agent reads first)."""
    values = [value for value in arguments.values() if isinstance(value, (str, int)) and not isinstance(value, bool)]
    calls = []
    for tool in program.tools.values():
        source = tool.source or {}
        if source.get("kind") != "lookup":
            continue
        if source.get("fromArray") is not None:
            collection = program.fixtures.get(source["fromArray"])
            field = source["matchField"]
            keys = (
                collection.keys()
                if isinstance(collection, Mapping)
                else [entry.get(field) for entry in collection or [] if isinstance(entry, Mapping)]
            )
            parameter = field
        else:
            path = str(source.get("fixturePath", ""))
            head, _, rest = path.partition(".")
            match = _WHOLE.match(rest)
            collection = program.fixtures.get(head)
            if match is None or not isinstance(collection, Mapping):
                continue
            keys, parameter = collection.keys(), match.group(1)
        for value in values:
            if value in keys:
                call = {"name": tool.name, "arguments": {parameter: value}}
                if tool.check(call["arguments"]) is None and call not in calls:
                    calls.append(call)
    return calls


def derive_reference_actions(program: Any, task: Any) -> list[dict[str, Any]] | None:
    """Tool calls that turn the initial state into ``task.hidden_ground_truth``, or None."""
    expected = task.hidden_ground_truth
    if not expected or program.template != "workflow":
        return None
    actions: list[dict[str, Any]] = []
    for key, value in expected.items():
        initial = program.initial_state.get(key, [])
        if value == initial:
            continue
        if not isinstance(value, list) or not isinstance(initial, list) or value[: len(initial)] != initial:
            return None
        for entry in value[len(initial) :]:
            write = _writer_calls(program, key, entry)
            if write is None:
                return None
            actions += [call for call in _lookups(program, write["arguments"]) if call not in actions]
            actions.append(write)
    return actions
