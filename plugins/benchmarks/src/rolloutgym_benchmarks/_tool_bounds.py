"""What a tool call's arguments may hold before a benchmark's own code sees them.

The tau2 and AgentDojo envs hand an agent's tool arguments to the benchmark's package, which
keeps them in its history and, at the end of the episode, copies, hashes and serialises it
with recursive code: arguments nested hundreds of levels deep were answered with a tool error
and kept, and the evaluator then raised ``RecursionError`` after the last action, an unscored
episode (and one recorded against an action that did not cause it). :func:`argument_problem`
walks the arguments without recursion and names what exceeds the bounds; such a call is not
run and not recorded, and the agent gets the problem as the call's result, so the episode
goes on and is scored. The bounds are far above what the benchmarks' tools take (their
arguments are at most four levels deep and a few hundred bytes).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_ARGUMENT_CHARS", "MAX_ARGUMENT_DEPTH", "MAX_ARGUMENT_ITEMS", "argument_problem", "parse_arguments"]

MAX_ARGUMENT_DEPTH = 16
"""Containers inside containers, the arguments' object counting as the first level."""
MAX_ARGUMENT_ITEMS = 10_000
"""Values (containers, keys and scalars) in one call's arguments."""
MAX_ARGUMENT_CHARS = 100_000
"""Characters of text (strings and keys) in one call's arguments, or of its JSON text."""


def argument_problem(arguments: Any) -> str | None:
    """Why ``arguments`` may not reach the benchmark's code (``None`` when they may): deeper
    than :data:`MAX_ARGUMENT_DEPTH`, more than :data:`MAX_ARGUMENT_ITEMS` values, more than
    :data:`MAX_ARGUMENT_CHARS` characters, or values that are not JSON's (checked without recursion)."""
    pending: list[tuple[Any, int]] = [(arguments, 1)]
    items = characters = 0
    while pending:
        value, depth = pending.pop()
        items += 1
        if items > MAX_ARGUMENT_ITEMS:
            return f"the arguments hold more than {MAX_ARGUMENT_ITEMS:,} values"
        if isinstance(value, str):
            characters += len(value)
        elif isinstance(value, (dict, list)):
            if depth > MAX_ARGUMENT_DEPTH:
                return f"the arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        return "an argument object has a key that is not a string"
                    characters += len(key)
                    pending.append((item, depth + 1))
            else:
                pending.extend((item, depth + 1) for item in value)
        elif value is not None and not isinstance(value, (bool, int, float)):
            return f"an argument is a {type(value).__name__}, not a JSON value"
        if characters > MAX_ARGUMENT_CHARS:
            return f"the arguments hold more than {MAX_ARGUMENT_CHARS:,} characters of text"
    return None


def parse_arguments(arguments: Any) -> tuple[Any, str | None]:
    """``(arguments, problem)``: a JSON text decoded (its length bounded first, so decoding
    cannot recurse deeply), then :func:`argument_problem`; a problem leaves ``None``."""
    if isinstance(arguments, str):
        if len(arguments) > MAX_ARGUMENT_CHARS:
            return None, f"the arguments' JSON text is longer than {MAX_ARGUMENT_CHARS:,} characters"
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as error:
            return None, f"the arguments are not JSON ({error.msg})"
        except RecursionError:
            return None, f"the arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
    problem = argument_problem(arguments)
    return (None, problem) if problem else (arguments, None)
