"""Grading contracts: the recursive :class:`Score`, :class:`Criterion`, :class:`Rubric`, :class:`Grader`."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ._empty import SHARED_EMPTY
from .display import int_text
from .jsonvalues import from_jsonable, strict_text, to_jsonable

__all__ = ["Criterion", "Grader", "Rubric", "Score", "ScoreValue"]


class Score:
    """A finite scalar value with named component scores, feedback and metadata.

    ``Score(0.75, {"correctness": Score(1.0, feedback="Correct."), "format": 0.5})``.
    Components may be numbers or Scores; feedback explains the value in words.
    """

    __slots__ = ("components", "feedback", "metadata", "value")
    __strict_json__ = True  # to_dict() output is already strict JSON (see jsonvalues)

    value: float
    components: dict[str, Score]
    metadata: dict[str, Any]
    feedback: str | None

    def __init__(
        self,
        value: float | int | str | bool,
        components: Mapping[str, Score | float] | None = None,
        metadata: Mapping[str, Any] | None = None,
        *,
        feedback: str | None = None,
    ) -> None:
        try:
            number = float(value)
        except OverflowError:  # an int past the float range
            number = math.inf
        if not math.isfinite(number):
            raise ValueError(f"score must be finite, got {int_text(value) if isinstance(value, int) else number}")
        normalised: dict[str, Score] = {}
        for name, child in (components or {}).items():
            if not isinstance(name, str) or not name:
                raise ValueError("score component names must be non-empty strings")
            normalised[name] = Score.from_value(child)
        if feedback is not None:
            if not isinstance(feedback, str):
                raise TypeError("feedback must be a str or None")
            feedback = feedback.strip()
            if not feedback:
                raise ValueError("feedback must be non-empty when given")
        object.__setattr__(self, "value", number)
        # Empty components/metadata are the shared read-only {} (no 2 x 64 bytes per Score).
        object.__setattr__(self, "components", normalised or SHARED_EMPTY)
        object.__setattr__(self, "metadata", dict(metadata) if metadata else SHARED_EMPTY)
        object.__setattr__(self, "feedback", feedback)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Score is immutable; cannot assign {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Score):
            return NotImplemented
        return (
            self.value == other.value
            and self.components == other.components
            and self.metadata == other.metadata
            and self.feedback == other.feedback
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [repr(self.value)]
        if self.components:
            parts.append(f"components={self.components!r}")
        if self.metadata:
            parts.append(f"metadata={self.metadata!r}")
        if self.feedback is not None:
            parts.append(f"feedback={self.feedback!r}")
        return f"Score({', '.join(parts)})"

    def __reduce__(self) -> Any:
        return (_rebuild_score, (self.value, self.components, self.metadata, self.feedback))

    @property
    def component_values(self) -> dict[str, float]:
        """``{name: child.value}`` for the immediate components."""
        return {name: child.value for name, child in self.components.items()}

    @classmethod
    def from_value(cls, value: Score | float | int | str | bool) -> Score:
        """Return ``value`` if it is a Score, else ``Score(float(value))``."""
        if isinstance(value, Score):
            return value
        if value is None:
            raise TypeError("a score value must be a number or a Score, got None")
        if cls is Score:  # a bare number: the shared immutable Score of that value (see _plain)
            return cls._plain(float(value))
        return cls(float(value))

    @classmethod
    def _plain(cls, value: float) -> Score:
        """``Score(value)`` for a float and nothing else, one shared instance per value.

        Scores are immutable, so the engine's default scores (one per trajectory, mostly a
        handful of distinct rewards) need not be built and kept once each. -0.0 keeps its sign.
        """
        score = _PLAIN_SCORES.get(value)
        if score is None or not (value or math.copysign(1.0, value) > 0):
            score = cls(value)
            if len(_PLAIN_SCORES) < 4096 and (value or math.copysign(1.0, value) > 0):
                _PLAIN_SCORES[value] = score
        return score

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``value``, ``components``, ``metadata`` and ``feedback`` when set."""
        data: dict[str, Any] = {
            "value": self.value,
            "components": {
                strict_text(name): child.to_dict()
                if type(child) is not Score or child.components or child.metadata or child.feedback is not None
                else {"value": child.value, "components": {}, "metadata": {}}  # a bare number's dict, inline
                for name, child in self.components.items()
            }
            if self.components
            else {},
            "metadata": to_jsonable(self.metadata) if self.metadata else {},
        }
        if self.feedback is not None:
            data["feedback"] = strict_text(self.feedback)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Score:
        """Rebuild a Score from :meth:`to_dict` output."""
        if "value" not in data:
            raise ValueError("score dict requires 'value'")
        components = data.get("components") or {}
        metadata = data.get("metadata") or {}
        if not isinstance(components, Mapping):
            raise TypeError("score 'components' must be a mapping")
        if not isinstance(metadata, Mapping):
            raise TypeError("score 'metadata' must be a mapping")
        feedback = data.get("feedback")
        if feedback is not None and not isinstance(feedback, str):
            raise TypeError("score 'feedback' must be a str or None")
        children: dict[str, Score] = {}
        for name, child in components.items():
            if not isinstance(name, str):
                raise TypeError("score component names must be str")
            if isinstance(child, Score):
                children[name] = child
            elif isinstance(child, Mapping):
                children[name] = cls.from_dict(child)
            else:
                children[name] = cls.from_value(child)
        return cls(data["value"], children, from_jsonable(dict(metadata)) if metadata else None, feedback=feedback)

    def as_info(self) -> dict[str, Any]:
        """``{"score": self.to_dict()}``, ready to merge into a step's info."""
        return {"score": self.to_dict()}

    @classmethod
    def from_info(cls, info: Mapping[str, Any], *, default: Score | None = None) -> Score | None:
        """Read ``info["score"]`` (a Score or a mapping); ``default`` when absent."""
        raw = info.get("score")
        if raw is None:
            return default
        if isinstance(raw, Score):
            return raw
        if isinstance(raw, Mapping):
            return cls.from_dict(raw)
        raise TypeError("info['score'] must be a Score or mapping")


_PLAIN_SCORES: dict[float, Score] = {}


def _rebuild_score(value: float, components: dict[str, Score], metadata: dict[str, Any], feedback: str | None) -> Score:
    return Score(value, components, metadata, feedback=feedback)


ScoreValue = float | Score


def _strip_required(value: str, field: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError(f"{field} must be non-empty")
    return value


class Criterion(BaseModel):
    """One thing a rubric evaluates, with a non-negative weight and a kind (required/bonus/penalty)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    description: str
    weight: float = 1.0
    kind: str = "required"
    references: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", "description", "kind")
    @classmethod
    def _non_empty(cls, value: str, info: Any) -> str:
        return _strip_required(value, info.field_name)

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: float) -> float:
        if not math.isfinite(value) or value < 0:
            raise ValueError("weight must be finite and >= 0")
        return value

    @field_validator("references")
    @classmethod
    def _references(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_strip_required(item, "reference") for item in value)


class Rubric(BaseModel):
    """What to evaluate: criteria (unique ids), optional instructions and id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    criteria: tuple[Criterion, ...] = Field(min_length=1)
    instructions: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", "instructions")
    @classmethod
    def _optional_text(cls, value: str | None, info: Any) -> str | None:
        return None if value is None else _strip_required(value, info.field_name)

    @model_validator(mode="after")
    def _unique_ids(self) -> Rubric:
        ids = [criterion.id for criterion in self.criteria]
        if len(ids) != len(set(ids)):
            raise ValueError("criterion ids must be unique")
        return self

    def criterion(self, criterion_id: str) -> Criterion:
        """Return the criterion with ``criterion_id`` (``KeyError`` when absent)."""
        for criterion in self.criteria:
            if criterion.id == criterion_id:
                return criterion
        raise KeyError(criterion_id)

    @property
    def fingerprint(self) -> str:
        """sha256 of the rubric's content, ignoring its ``id``."""
        payload = json.dumps(
            self.model_dump(mode="python", exclude={"id"}), sort_keys=True, separators=(",", ":"), default=repr
        )
        return hashlib.sha256(payload.encode()).hexdigest()


InputT_contra = TypeVar("InputT_contra", contravariant=True)
RubricT_contra = TypeVar("RubricT_contra", contravariant=True)


class Grader(Protocol[InputT_contra, RubricT_contra]):
    """Anything called as ``grader(input, rubric)`` returning a number or Score (or an awaitable)."""

    def __call__(self, input: InputT_contra, rubric: RubricT_contra, /) -> ScoreValue | Awaitable[ScoreValue]: ...
