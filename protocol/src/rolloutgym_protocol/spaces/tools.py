"""Tool-call spaces: ``{"name", "arguments", "id"?}`` validated per tool with Gymnasium spaces.

JSON encoding uses plain argument objects (``{"q": "x", "k": 2}``), never Gymnasium's
batched encoding, so model output parses directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from .. import jsonvalues
from ..types import ToolCall
from ._pydantic import PydanticSpace
from .schema import to_json_schema

__all__ = ["ToolCallSpace", "ToolCallsSpace", "call", "calls"]


class ToolCallSpace(PydanticSpace):
    """A call to one of ``tools``; each tool's arguments must be in its (``Dict``) space.

    ``descriptions`` gives each tool's description for :meth:`tool_definitions`.
    """

    def __init__(
        self,
        tools: Mapping[str, gym.Space[Any]],
        *,
        descriptions: Mapping[str, str] | None = None,
        include_id_in_samples: bool = False,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        if not tools:
            raise ValueError("a ToolCallSpace needs at least one tool")
        for name, schema in tools.items():
            if not isinstance(name, str) or not name:
                raise ValueError("tool names must be non-empty strings")
            if not isinstance(schema, gym.Space):
                raise TypeError(
                    f"tool {name!r}: argument schema must be a gymnasium Space (got {type(schema).__name__}); "
                    "wrap JSON-schema tools with gym.spaces.Dict"
                )
        self.tools = dict(tools)
        self.descriptions = dict(descriptions or {})
        self.include_id_in_samples = include_id_in_samples
        super().__init__(ToolCall, sampler=self._sample_call, seed=seed)

    @property
    def tool_schemas(self) -> dict[str, gym.Space[Any]]:
        return self.tools

    def _extra_checks(self, value: Any) -> bool:
        schema = self.tools.get(value["name"])
        if schema is None:
            return False
        arguments = value["arguments"]
        if isinstance(schema, gym.spaces.Dict):
            if set(arguments) != set(schema.spaces):
                return False
            return all(_member(schema.spaces[key], item) for key, item in arguments.items())
        return _member(schema, arguments)

    def _sample_call(self, generator: np.random.Generator) -> dict[str, Any]:
        names = list(self.tools)
        name = names[int(generator.integers(0, len(names)))]
        value: dict[str, Any] = {"name": name, "arguments": dict(self.tools[name].sample())}
        if self.include_id_in_samples:
            value["id"] = "call_" + "".join(f"{int(b):02x}" for b in generator.integers(0, 256, size=8))
        return value

    def seed(self, seed: int | None = None) -> list[int]:  # type: ignore[override]
        seeds = [int(value) for value in np.atleast_1d(super().seed(seed))]
        for schema in self.tools.values():
            schema.seed(int(self.np_random.integers(0, 2**31 - 1)))
        return seeds

    def to_jsonable(self, sample_n: Sequence[Any]) -> list[Any]:
        encoded = []
        for value in sample_n:
            item: dict[str, Any] = {"name": value["name"], "arguments": _plain_json(value["arguments"])}
            if "id" in value:
                item["id"] = value["id"]
            encoded.append(item)
        return encoded

    def from_jsonable(self, sample_n: list[Any]) -> list[Any]:
        decoded = []
        for value in sample_n:
            self.validate(value)
            if not self.contains(value):
                shown = jsonvalues.dumps(value)  # repr() fails on deep nesting and huge ints
                raise ValueError(f"not a valid call for this ToolCallSpace: {shown[:300]}")
            decoded.append(value)
        return decoded

    def json_schema(self) -> dict[str, Any]:
        """A JSON schema for one call (a ``oneOf`` over the tools)."""
        return {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "name": {"const": name},
                        "arguments": to_json_schema(schema),
                        "id": {"type": "string"},
                    },
                    "required": ["name", "arguments"],
                    "additionalProperties": False,
                }
                for name, schema in self.tools.items()
            ]
        }

    def tool_definitions(self) -> list[dict[str, Any]]:
        """OpenAI-style tool definitions (``{"type": "function", "function": {...}}``)."""
        definitions = []
        for name, schema in self.tools.items():
            function: dict[str, Any] = {"name": name, "parameters": to_json_schema(schema)}
            if name in self.descriptions:
                function["description"] = self.descriptions[name]
            definitions.append({"type": "function", "function": function})
        return definitions

    def __repr__(self) -> str:
        return f"ToolCallSpace(tools={tuple(self.tools)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolCallSpace) and other.tools == self.tools


def _member(space: gym.Space[Any], value: Any) -> bool:
    """``space.contains(value)`` that never raises: whatever a model sends (NaN, ``10**400``,
    lone surrogates, deep nesting, wrong types) is either a member or not."""
    if isinstance(value, (bool, np.bool_)) and isinstance(space, (gym.spaces.Discrete, gym.spaces.Box)):
        return False  # JSON true is not a number (Gymnasium would take it as 1)
    # JSON gives Python ints/lists; Gymnasium Box/MultiBinary want arrays.
    if isinstance(space, (gym.spaces.Box, gym.spaces.MultiBinary)) and not isinstance(value, np.ndarray):
        try:
            raw = np.asarray(value)
            # numbers only: no silent casts of true/"0.5"/1.5 into a float, int or binary space
            allowed = (
                "iub" if isinstance(space, gym.spaces.MultiBinary) else "iu" if space.dtype.kind in "iu" else "iuf"
            )
            if raw.dtype.kind not in allowed:
                return False
            value = raw.astype(space.dtype)
        except (TypeError, ValueError, OverflowError, RecursionError):
            return False  # not even an array of numbers
    try:
        return bool(space.contains(value))
    except (TypeError, ValueError, OverflowError, RecursionError, AttributeError, IndexError, KeyError):
        return False


def _plain_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _plain_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(item) for item in value]
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) else value


def call(
    tools: Mapping[str, gym.Space[Any]],
    *,
    descriptions: Mapping[str, str] | None = None,
    include_id_in_samples: bool = False,
    seed: int | np.random.Generator | None = None,
) -> ToolCallSpace:
    """One tool call."""
    return ToolCallSpace(tools, descriptions=descriptions, include_id_in_samples=include_id_in_samples, seed=seed)


class ToolCallsSpace(gym.spaces.Sequence):
    """A sequence of tool calls that takes ordinary lists as well as tuples.

    Gymnasium's ``Sequence`` only contains tuples; a model's (or a JSON decoder's) list of
    calls is an ordinary list, which the protocol promises to accept as the chat space does.
    """

    def contains(self, x: Any) -> bool:
        if isinstance(x, list) and not self.stack:
            x = tuple(x)
        return bool(super().contains(x))


def calls(
    tools: Mapping[str, gym.Space[Any]],
    *,
    descriptions: Mapping[str, str] | None = None,
    stack: bool = False,
    seed: int | np.random.Generator | None = None,
) -> ToolCallsSpace:
    """A sequence of tool calls (a list or a tuple of calls)."""
    return ToolCallsSpace(ToolCallSpace(tools, descriptions=descriptions), stack=stack, seed=seed)
