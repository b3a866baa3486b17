"""The workflow plugin's verifier primitive ``calls_from_task`` (registered by ``plugin.py``).

``calls_from_task`` checks the path where the path is the point (docs TASKS.md, rule 3): every
call the task lists under ``metadata[key]`` (default ``required_calls``), ``{"name": ...,
"arguments": {...}}``, was made with at least those arguments. ``workflow/refund-v2`` lists the
email lookup of the tasks whose right end state is the untouched world (an unknown email): a
reply that refuses without looking the email up is a guess, and scores 0 there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rolloutgym.verifiers import VerifierContext
from rolloutgym_protocol import Score
from rolloutgym_protocol.display import json_text, safe_repr
from rolloutgym_protocol.errors import ConfigError

__all__ = ["calls_from_task"]


def _made(wanted: Mapping[str, Any], call: Any) -> bool:
    if call.name != wanted.get("name"):
        return False
    arguments = call.arguments if isinstance(call.arguments, Mapping) else {}
    return all(arguments.get(key) == value for key, value in (wanted.get("arguments") or {}).items())


class CallsFromTask:
    """The grader ``calls_from_task`` builds (see the module docstring)."""

    requires_judge = False

    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, context: VerifierContext, criterion: Any = None) -> Score:
        metadata = context.task_field("metadata") or {}
        wanted = metadata.get(self.key) if isinstance(metadata, Mapping) else None
        if not wanted:
            return Score(1.0, feedback="no calls required")
        missing = [call for call in wanted if not any(_made(call, made) for made in context.tool_calls)]
        if missing:
            described = ", ".join(
                f"{call.get('name')}({json_text(call.get('arguments') or {}, default=safe_repr)})" for call in missing
            )
            return Score(
                0.0, feedback=f"the agent never made the call(s) the answer rests on: {described}", metadata={}
            )
        return Score(1.0, feedback=f"made the {len(wanted)} required call(s)")

    def __repr__(self) -> str:
        return f"calls_from_task(key={self.key!r})"


def calls_from_task(key: str = "required_calls", **unknown: Any) -> CallsFromTask:
    """``calls_from_task``: every call listed in the task's ``metadata[key]`` was made (arguments as a subset)."""
    if unknown:
        raise ConfigError(f"unknown parameter(s) {', '.join(sorted(unknown))}; known: key")
    if not isinstance(key, str) or not key:
        raise ConfigError(f"key must be a non-empty string, got {key!r}")
    return CallsFromTask(key)
