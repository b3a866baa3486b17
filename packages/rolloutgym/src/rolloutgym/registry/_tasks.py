"""Reading the id and split of a task item, whatever its shape (object or mapping)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["task_id", "task_split"]


def _field(item: Any, *names: str) -> Any:
    for name in names:
        if isinstance(item, Mapping):
            if name in item and item[name] is not None:
                return item[name]
        else:
            value = getattr(item, name, None)
            if value is not None:
                return value
    return None


def task_id(item: Any, index: int) -> str:
    """The task's ``id`` (or ``task_id``/``example_id``), else its index as a string."""
    value = _field(item, "id", "task_id", "example_id")
    return str(index) if value is None else str(value)


def task_split(item: Any) -> str | None:
    """The task's ``split`` (None when it has none)."""
    value = _field(item, "split")
    return None if value is None else str(value)
