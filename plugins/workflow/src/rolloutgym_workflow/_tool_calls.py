"""One tool call of a workflow episode: checked, run against the state, recorded, answered.

:class:`ToolCalls` is the part of :class:`~rolloutgym_workflow.envs.WorkflowEnv` that turns
one call into its tool message: a malformed call, an unknown tool, bad arguments or a spent
budget come back as ``error: ...`` (counted in ``info["invalid_actions"]``); a call that may
run runs on the episode's state (``McpWorkflowEnv`` runs its MCP tools between
``_prepare`` and ``_succeed``/``_fail_call``); every call is recorded for the verifier.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rolloutgym.verifiers import ToolCallRecord
from rolloutgym_protocol.display import json_text, safe_repr, safe_str

from ._arguments import parse_arguments
from ._tools import ToolError

if TYPE_CHECKING:
    from .template import Program

__all__ = ["ToolCalls"]

_ENCODER = json.JSONEncoder(ensure_ascii=False, default=safe_str)


def _encode(result: Any) -> str:
    """A tool result as the JSON text the model reads (any value: see ``display.json_text``)."""
    try:
        return _ENCODER.encode(result)
    except (TypeError, ValueError, RecursionError, OverflowError):
        return json_text(result)


class ToolCalls:
    """Tool calls of an episode (a mixin of ``WorkflowEnv``, which sets these attributes)."""

    program: Program
    max_tool_calls: int
    state: dict[str, Any]
    records: list[ToolCallRecord]
    extra_tools: dict[str, Any]
    _invalid: int
    _env_faults: list[str]

    def _call(self, call: Any) -> dict[str, Any]:
        prepared = self._prepare(call)
        if type(prepared) is dict:
            return prepared
        tool, call_id, arguments = prepared
        return self._run_local(tool, call_id, arguments)

    def _prepare(self, call: Any) -> dict[str, Any] | tuple[Any, str, dict[str, Any]]:
        """``(tool, call_id, arguments)`` of a call that may run, else its error message (recorded)."""
        position = len(self.records)
        if type(call) is not dict and not isinstance(call, Mapping):
            self._invalid += 1
            self.records.append(ToolCallRecord("", call, None, "malformed tool call"))
            return {
                "role": "tool",
                "tool_call_id": f"call_{position}",
                "content": 'error: a tool call must be an object {"name": ..., "arguments": {...}}',
            }
        function: Mapping[str, Any] = (
            call["function"] if "function" in call and isinstance(call["function"], Mapping) else call
        )
        name = function.get("name")
        raw_arguments = function.get("arguments")
        call_id = call.get("id")
        if type(call_id) is not str:
            call_id = f"call_{position}"
        if position >= self.max_tool_calls:
            return self._fail_call(
                name,
                call_id,
                f"the tool-call budget ({self.max_tool_calls}) is spent; give your final answer now",
                invalid=True,
                arguments=raw_arguments,
            )
        tool = None
        if isinstance(name, str):
            tool = self.program.tools.get(name) or self.extra_tools.get(name)
        if tool is None:
            available = ", ".join([*self.program.tools, *self.extra_tools])
            return self._fail_call(
                name,
                call_id,
                f"unknown tool {safe_repr(name)[:80]}; available tools: {available}",
                invalid=True,
                arguments=raw_arguments,
            )
        arguments, error = parse_arguments(raw_arguments)
        if error is not None:
            return self._fail_call(name, call_id, f"{tool.name}: {error}", invalid=True, arguments=raw_arguments)
        assert arguments is not None
        error = tool.check(arguments)
        if error is not None:
            return self._fail_call(name, call_id, f"{tool.name}: {error}", invalid=True, arguments=arguments)
        return tool, call_id, arguments

    def _run_local(self, tool: Any, call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            result = tool.run(arguments, self.state, self.program.fixtures)
        except ToolError as exc:
            return self._fail_call(tool.name, call_id, str(exc), invalid=False, arguments=arguments)
        except (RecursionError, MemoryError, ValueError, TypeError, KeyError, IndexError) as exc:
            # Arguments that passed the tool's schema and still crash it: the env's fault (attribution).
            self._env_faults.append(f"{tool.name}: {type(exc).__name__}: {safe_str(exc)[:200]}")
            return self._fail_call(
                tool.name,
                call_id,
                f"{tool.name} failed: {type(exc).__name__}: {safe_str(exc)}",
                invalid=False,
                arguments=arguments,
            )
        return self._succeed(tool.name, call_id, arguments, result)

    def _fail_call(self, name: Any, call_id: str, error: str, *, invalid: bool, arguments: Any) -> dict[str, Any]:
        """Record a failed call; its tool message is ``error: ...`` (``invalid``: the model's mistake)."""
        if invalid:
            self._invalid += 1
        self.records.append(ToolCallRecord(safe_str(name), arguments, None, error))
        return {"role": "tool", "tool_call_id": call_id, "content": f"error: {error}"}

    def _succeed(
        self, name: str, call_id: str, arguments: dict[str, Any], result: Any, content: str | None = None
    ) -> dict[str, Any]:
        """Record a call that ran; its tool message is ``content`` (default: the result as JSON)."""
        self.records.append(ToolCallRecord(name, arguments, result, None))
        return {"role": "tool", "tool_call_id": call_id, "content": _encode(result) if content is None else content}
