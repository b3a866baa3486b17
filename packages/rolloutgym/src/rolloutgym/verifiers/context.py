"""What a verifier sees of a finished episode: :class:`VerifierContext` and :class:`ToolCallRecord`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolCallRecord", "VerifierContext"]


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call of the episode: its name, arguments, result and error (None when it worked).

    Calls the environment refused (unknown tool, malformed arguments) are recorded too,
    with their error.
    """

    name: str
    arguments: Any
    result: Any = None
    error: str | None = None


@dataclass(frozen=True)
class VerifierContext:
    """The input of every verifier primitive.

    Attributes:
        final_state: the environment's state at the end of the episode (JSON-like).
        final_output: the agent's final answer ("" when it gave none).
        tool_calls: every tool call, in order.
        task: the task (a :class:`~rolloutgym.declarative.Task` or any object with
            ``instruction``, ``hidden_ground_truth`` and ``metadata``).
        judge: the policy ``llm_judge`` primitives ask (None when none is configured).
    """

    final_state: Mapping[str, Any] = field(default_factory=dict)
    final_output: str = ""
    tool_calls: Sequence[ToolCallRecord] = ()
    task: Any = None
    judge: Any = None

    def task_field(self, name: str, default: Any = None) -> Any:
        """A field of the task, whether it is an object or a mapping."""
        if isinstance(self.task, Mapping):
            return self.task.get(name, default)
        return getattr(self.task, name, default)
