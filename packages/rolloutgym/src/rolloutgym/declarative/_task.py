"""``Task``: one instruction of a declarative environment, with its hidden ground truth."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import EnvFileError, json_error_text

__all__ = ["SPLITS", "Task"]

SPLITS = ("train", "dev", "test")
"""The split names a task may use."""

_FIELDS = {
    "instruction",
    "hidden_ground_truth",
    "hiddenGroundTruth",
    "input",
    "split",
    "id",
    "reference_actions",
    "referenceActions",
    "reference_answer",
    "referenceAnswer",
    "metadata",
    "user",
}


@dataclass
class Task:
    """One task: an instruction for the agent plus what a grader may see and the agent may not.

    The first four fields are the rollout SDK's (same names, same order); the others are
    rolloutgym additions, all optional.

    Attributes:
        instruction: what the agent is asked to do (the user message).
        hidden_ground_truth: the expected end state (for the ``workflow`` template, the
            mutable state after the reference solution), used by ``ground_truth_match``.
        input: extra structured input shown to the agent under the instruction.
        split: ``"train"``, ``"dev"`` (default) or ``"test"``; anything else is an error.
        id: a stable task id (defaults to the task's index when the env is loaded).
        reference_actions: the reference solution the ``oracle`` policy replays, one entry
            per step: a tool call ``{"name": ..., "arguments": {...}}`` or a whole assistant
            message ``{"role": "assistant", "content": ..., "tool_calls": [...]}``.
        reference_answer: the oracle's final answer (a message without tool calls) after
            the reference actions.
        metadata: free-form data for graders and reports (skills exercised, answer terms).
        user: a simulated user for conversational tasks (``workflow``/``custom`` templates):
            the user holds ``instruction`` (their goal) and private ``facts`` and reveals them
            only when asked; the agent sees the conversation, not the instruction. Keys:
            ``opening``, ``persona``, ``facts``, and behaviour options (see
            ``rolloutgym_workflow.user``).
    """

    instruction: str
    hidden_ground_truth: dict[str, Any] = field(default_factory=dict)
    input: dict[str, Any] | None = None
    split: str = "dev"
    id: str | None = None
    reference_actions: list[dict[str, Any]] = field(default_factory=list)
    reference_answer: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        where = f"task {self.id!r}" if self.id is not None else "task"
        if not isinstance(self.instruction, str) or not self.instruction.strip():
            raise EnvFileError(f"{where}: 'instruction' must be a non-empty string, got {self.instruction!r:.80}")
        if self.split not in SPLITS:
            raise EnvFileError(f"{where}: unknown split {self.split!r}; use one of {', '.join(SPLITS)}")
        if self.hidden_ground_truth is None:
            self.hidden_ground_truth = {}
        if not isinstance(self.hidden_ground_truth, dict):
            raise EnvFileError(
                f"{where}: 'hidden_ground_truth' must be a JSON object, got {type(self.hidden_ground_truth).__name__}"
            )
        if self.input is not None and not isinstance(self.input, dict):
            raise EnvFileError(f"{where}: 'input' must be a JSON object or None, got {type(self.input).__name__}")
        if self.id is not None and (not isinstance(self.id, str) or not self.id.strip()):
            raise EnvFileError(f"{where}: 'id' must be a non-empty string")
        if not isinstance(self.reference_actions, list):
            raise EnvFileError(f"{where}: 'reference_actions' must be a list of tool calls or assistant messages")
        for position, action in enumerate(self.reference_actions):
            _check_reference_action(action, f"{where}: reference_actions[{position}]")
        if self.reference_answer is not None and not isinstance(self.reference_answer, str):
            raise EnvFileError(f"{where}: 'reference_answer' must be a string")
        if not isinstance(self.metadata, dict):
            raise EnvFileError(f"{where}: 'metadata' must be a JSON object")
        if self.user is not None and not isinstance(self.user, dict):
            raise EnvFileError(f"{where}: 'user' must be a JSON object (persona, facts, opening, ...) or None")

    def to_dict(self) -> dict[str, Any]:
        """Every field, snake_case (how run files record the task of a group)."""
        data = {
            "id": self.id,
            "instruction": self.instruction,
            "hidden_ground_truth": self.hidden_ground_truth,
            "input": self.input,
            "split": self.split,
            "reference_actions": self.reference_actions,
            "reference_answer": self.reference_answer,
            "metadata": self.metadata,
        }
        if self.user is not None:
            data["user"] = self.user
        return data

    def to_payload(self) -> dict[str, Any]:
        """The SDK's JSON shape (camelCase), plus the rolloutgym fields that are set."""
        payload: dict[str, Any] = {
            "instruction": self.instruction,
            "hiddenGroundTruth": self.hidden_ground_truth,
            "split": self.split,
        }
        if self.input is not None:
            payload["input"] = self.input
        if self.id is not None:
            payload["id"] = self.id
        if self.reference_actions:
            payload["referenceActions"] = self.reference_actions
        if self.reference_answer is not None:
            payload["referenceAnswer"] = self.reference_answer
        if self.metadata:
            payload["metadata"] = self.metadata
        if self.user is not None:
            payload["user"] = self.user
        return payload

    @classmethod
    def from_payload(cls, data: Mapping[str, Any], *, where: str = "task") -> Task:
        """Build a task from a JSON object (snake_case or the SDK's camelCase keys).

        Raises:
            EnvFileError: a required key is missing, a key is unknown, or a value is invalid.
        """
        if not isinstance(data, Mapping):
            raise EnvFileError(f"{where}: a task must be a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - _FIELDS)
        if unknown:
            raise EnvFileError(
                f"{where}: unknown task field(s) {', '.join(map(repr, unknown))}; known: instruction, "
                "hidden_ground_truth, input, split, id, reference_actions, reference_answer, metadata, user"
            )
        if "instruction" not in data:
            raise EnvFileError(f"{where}: missing 'instruction'")

        def pick(snake: str, camel: str, default: Any) -> Any:
            if snake in data:
                return data[snake]
            return data.get(camel, default)

        try:
            return cls(
                instruction=data["instruction"],
                hidden_ground_truth=pick("hidden_ground_truth", "hiddenGroundTruth", {}) or {},
                input=data.get("input"),
                split=data.get("split", "dev"),
                id=data.get("id"),
                reference_actions=pick("reference_actions", "referenceActions", []) or [],
                reference_answer=pick("reference_answer", "referenceAnswer", None),
                metadata=data.get("metadata") or {},
                user=data.get("user"),
            )
        except EnvFileError as exc:
            raise EnvFileError(f"{where}: {exc}") from None

    @classmethod
    def from_jsonl(cls, path: str | Path) -> list[Task]:
        """Read one task per line (blank lines skipped), as the SDK's ``Task.from_jsonl``.

        A relative ``path`` is read from the folder of the file that calls this (the env
        file), so ``Task.from_jsonl("tasks.jsonl")`` works from any working directory; when
        no such file is there, it is read from the working directory.

        Raises:
            EnvFileError: with the file and line number of a malformed line.
        """
        path = _beside_caller(Path(path), sys._getframe(1).f_globals.get("__file__"))
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise EnvFileError(f"cannot read tasks file {path}: {exc.strerror or exc}") from None
        tasks = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EnvFileError(f"{where}: not valid JSON ({json_error_text(exc)})") from None
            tasks.append(cls.from_payload(data, where=where))
        return tasks


def _beside_caller(path: Path, caller_file: Any) -> Path:
    if path.is_absolute() or not isinstance(caller_file, str):
        return path
    beside = Path(caller_file).resolve().parent / path
    return beside if beside.exists() or not path.exists() else path


def _check_reference_action(action: Any, where: str) -> None:
    if not isinstance(action, dict):
        raise EnvFileError(
            f"{where}: expected a tool call {{'name': ..., 'arguments': {{...}}}} or an assistant message"
        )
    if "role" in action:
        if action.get("role") != "assistant":
            raise EnvFileError(f"{where}: a message in reference_actions must have role 'assistant'")
        return
    if not isinstance(action.get("name"), str) or not action["name"]:
        raise EnvFileError(f"{where}: a tool call needs a 'name'")
    if not isinstance(action.get("arguments", {}), dict):
        raise EnvFileError(f"{where}: tool call 'arguments' must be a JSON object")


class TaskFieldError(EnvFileError, TypeError):
    """``Task(...)`` called with a keyword that is no field (or without ``instruction``)."""


_SNAKE = {"hiddenGroundTruth": "hidden_ground_truth", "referenceActions": "reference_actions"}
_SNAKE["referenceAnswer"] = "reference_answer"


def _checked_init(dataclass_init: Any) -> Any:
    """Wrap the dataclass ``__init__``: a wrong keyword names the file and line, the field meant and
    every field, instead of a bare ``TypeError``."""
    import functools
    import inspect

    fields = [name for name in inspect.signature(dataclass_init).parameters if name != "self"]

    @functools.wraps(dataclass_init)
    def __init__(self: Task, *args: Any, **kwargs: Any) -> None:
        from rolloutgym_protocol.errors import did_you_mean

        unknown = [name for name in kwargs if name not in fields]
        missing = not args and "instruction" not in kwargs
        if unknown or missing:
            caller = sys._getframe(1)
            where = f"{caller.f_code.co_filename}:{caller.f_lineno}"
            if unknown:
                name = unknown[0]
                hint = f" Did you mean '{_SNAKE[name]}'?" if name in _SNAKE else did_you_mean(name, fields)
                problem = f"Task() has no field {name!r}.{hint}"
            else:
                problem = "Task() needs an 'instruction' (what the agent is asked to do)."
            raise TaskFieldError(f"{where}: {problem} Its fields: {', '.join(fields)}")
        dataclass_init(self, *args, **kwargs)

    __init__.__signature__ = inspect.signature(dataclass_init)  # type: ignore[attr-defined]
    return __init__


Task.__init__ = _checked_init(Task.__init__)  # type: ignore[method-assign]
