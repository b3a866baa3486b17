"""``MathExample``: one benchmark problem, and how rows of any source become one."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MathExample", "make_example_id", "row_to_example"]


class MathExample(BaseModel):
    """A math problem and its reference answer.

    Attributes:
        question: the problem statement shown to the model.
        answer: the reference answer as text (a GSM8K solution ending in ``#### 72``, or ``"70"``).
        example_id: a stable id (``make_example_id`` when the source has none).
        split: the dataset split the problem belongs to, when known.
        metadata: every other field of the source row.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    question: str
    answer: str
    example_id: str | None = None
    split: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


def make_example_id(prefix: str, question: str) -> str:
    """``"prefix:<first 16 hex digits of sha256(question.strip())>"``, stable across runs and machines."""
    digest = hashlib.sha256(question.strip().encode("utf-8")).hexdigest()[:16]
    return f"{prefix}:{digest}"


def _first(row: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in keys:
        if key in row and row[key] is not None:
            return key, row[key]
    return None, None


def row_to_example(
    row: MathExample | Mapping[str, Any],
    *,
    prefix: str,
    question_keys: tuple[str, ...] = ("question",),
    answer_keys: tuple[str, ...] = ("answer",),
    split: str | None = None,
    where: str = "",
) -> MathExample:
    """Turn a source row into a :class:`MathExample`.

    The id comes from ``example_id`` or ``id`` (as text), else :func:`make_example_id`; a
    numeric answer becomes text; the remaining keys go into ``metadata``.

    Raises:
        ValueError: the row has no question or no answer (naming the keys looked for and ``where``).
    """
    if isinstance(row, MathExample):
        if row.example_id is not None and (row.split is not None or split is None):
            return row
        return row.model_copy(
            update={"example_id": row.example_id or make_example_id(prefix, row.question), "split": row.split or split}
        )
    if not isinstance(row, Mapping):
        raise ValueError(f"{prefix} example{where} must be a MathExample or a mapping, got {type(row).__name__}")
    question_key, question = _first(row, question_keys)
    answer_key, answer = _first(row, answer_keys)
    if question_key is None or not str(question).strip():
        raise ValueError(
            f"{prefix} example{where} has no question: give one of the fields {list(question_keys)}; it has "
            f"{sorted(row)}"
        )
    if answer_key is None or isinstance(answer, bool) or not str(answer).strip():
        raise ValueError(
            f"{prefix} example{where} has no answer: give one of the fields {list(answer_keys)}; it has {sorted(row)}"
        )
    _, identifier = _first(row, ("example_id", "id"))
    consumed = {question_key, answer_key, "example_id", "id", "split", "metadata"}
    metadata = dict(row.get("metadata") or {}) if isinstance(row.get("metadata"), Mapping) else {}
    metadata.update({key: value for key, value in row.items() if key not in consumed})
    return MathExample(
        question=str(question),
        answer=str(answer),
        example_id=str(identifier) if identifier is not None else make_example_id(prefix, str(question)),
        split=str(row["split"]) if row.get("split") is not None else split,
        metadata=metadata,
    )
