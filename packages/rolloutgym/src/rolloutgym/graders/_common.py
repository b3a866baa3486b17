"""Private helpers shared by the grader modules: score coercion and rubric metadata."""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Awaitable, Mapping
from typing import Any, TypeGuard

from rolloutgym_protocol import Rubric, Score

__all__ = ["discard_awaitable", "is_awaitable", "to_score", "with_rubric_metadata"]


def is_awaitable(value: Any) -> TypeGuard[Awaitable[Any]]:
    """True for coroutines, futures and any object with ``__await__``."""
    return inspect.isawaitable(value)


def discard_awaitable(awaitable: Any) -> None:
    """Release an awaitable that will never be awaited, so Python does not warn about it.

    Coroutines and objects with ``close()`` are closed; futures and tasks are cancelled.
    """
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
        return
    cancel = getattr(awaitable, "cancel", None)
    if callable(cancel):
        cancel()


def to_score(result: Any, error_message: str) -> Score:
    """Turn a grader result (a Score or a real number) into a Score.

    Strings, ``None`` and other objects raise ``TypeError(error_message)``: a grader that
    returns text has not parsed its answer yet. Non-finite numbers raise ``ValueError``.
    """
    if isinstance(result, Score):
        return result
    if isinstance(result, numbers.Real):
        return Score(float(result))
    raise TypeError(f"{error_message} (got {type(result).__name__}); return a float or a Score")


def with_rubric_metadata(score: Score, rubric: Any, metadata: Mapping[str, Any] | None = None) -> Score:
    """Return ``score`` with ``metadata`` merged under its own, plus the rubric's identity.

    ``score.metadata`` overrides ``metadata``. When ``rubric`` is a :class:`Rubric`,
    ``rubric_fingerprint`` and (if the rubric has an id) ``rubric_id`` are added unless
    already present. Other rubric objects (a plain instruction string) add nothing.
    """
    merged = dict(metadata or {})
    merged.update(score.metadata)
    if isinstance(rubric, Rubric):
        merged.setdefault("rubric_fingerprint", rubric.fingerprint)
        if rubric.id is not None:
            merged.setdefault("rubric_id", rubric.id)
    if merged == score.metadata:
        return score
    return Score(score.value, score.components, merged, feedback=score.feedback)
