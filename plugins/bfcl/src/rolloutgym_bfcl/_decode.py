"""An assistant message -> the decoded calls BFCL's function-calling handlers produce.

BFCL's FC handlers turn a reply into ``[{name: arguments}, ...]``: a reply without tool
calls (plain text) does not decode, and neither does one whose arguments are a JSON string
that does not parse. Arguments arrive here as objects (rolloutgym's LLM loop parses them)
or as JSON strings (OpenAI wire shape); both are accepted. A call the loop could not parse
at all arrives named ``unparseable_tool_call`` and does not decode either; one whose JSON
was broken but whose name could still be read arrives as that name with empty arguments
(the loop's contract), which the AST check then rejects for its missing arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rolloutgym.llm.parsing import UNPARSEABLE_TOOL

__all__ = ["Decoded", "decode_reply", "is_call_format", "is_empty_output"]


class Decoded:
    """A decoded reply: ``calls`` (None when the reply does not decode) and why not."""

    __slots__ = ("calls", "problem")

    def __init__(self, calls: list[dict[str, Any]] | None, problem: str = "") -> None:
        self.calls = calls
        self.problem = problem


def decode_reply(action: Any) -> Decoded:
    """Decode a policy's action (an assistant message, or plain text)."""
    if isinstance(action, str) or action is None:
        return Decoded(None, "the reply has no tool calls")
    if not isinstance(action, Mapping):
        return Decoded(None, f"the reply is a {type(action).__name__}, not an assistant message")
    tool_calls = action.get("tool_calls")
    if not tool_calls:
        return Decoded(None, "the reply has no tool calls")
    if isinstance(tool_calls, Mapping):
        tool_calls = [tool_calls]
    if not isinstance(tool_calls, (list, tuple)):
        return Decoded(None, "tool_calls must be a list")
    calls: list[dict[str, Any]] = []
    for call in tool_calls:
        if not isinstance(call, Mapping):
            return Decoded(None, "a tool call must be an object with a name and arguments")
        function = call["function"] if isinstance(call.get("function"), Mapping) else call
        name = function.get("name")
        arguments = function.get("arguments")
        if arguments is None:
            arguments = {}
        if isinstance(arguments, (str, bytes)):
            try:
                arguments = json.loads(arguments)
            except ValueError as error:
                return Decoded(None, f"the arguments of {name!r} are not valid JSON ({error})")
        if not isinstance(name, str):
            return Decoded(None, "a tool call has no function name")
        if name == UNPARSEABLE_TOOL:
            # rolloutgym's LLM loop sends a <tool_call> block it could not parse under this name.
            return Decoded(None, "a tool call could not be parsed")
        calls.append({name: dict(arguments) if isinstance(arguments, Mapping) else arguments})
    return Decoded(calls)


def is_call_format(calls: Any) -> bool:
    """BFCL's format rule: a list of ``{name: {param: value}}`` with one key each."""
    if type(calls) is not list:
        return False
    for item in calls:
        if type(item) is not dict or len(item) != 1 or type(next(iter(item.values()))) is not dict:
            return False
    return True


def is_empty_output(calls: Any) -> bool:
    """BFCL's rule for "no function call": not in call format, ``[]`` or ``[{}]``."""
    if not is_call_format(calls):
        return True
    return len(calls) == 0 or (len(calls) == 1 and len(calls[0]) == 0)
