"""Task items: reading their id and split whatever their shape (object or mapping), and finding one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol.errors import TaskNotFound, did_you_mean

__all__ = ["TaskIndex", "task_id", "task_split"]


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


class TaskIndex:
    """An env's task items with their ids, looked up in O(1) by index, id or the item itself.

    Built once per env by :meth:`Registry.task_index` (and once per run for env files and
    URLs), so a trainer asking for one task per episode never rebuilds the task ids.
    An env without tasks has one "task", ``None`` (id ``"0"``), and refuses ``task=...``.
    """

    __slots__ = ("by_id", "by_identity", "has_tasks", "ids", "items")

    def __init__(self, items: Sequence[Any], ids: Sequence[str] | None = None) -> None:
        self.has_tasks = bool(items) and not (len(items) == 1 and items[0] is None)
        self.items: list[Any] = list(items) if self.has_tasks else [None]
        if ids is None or not self.has_tasks:
            ids = [task_id(item, index) for index, item in enumerate(self.items)] if self.has_tasks else ["0"]
        self.ids: list[str] = list(ids)
        self.by_id: dict[str, int] = {}
        for index, identifier in enumerate(self.ids):
            self.by_id.setdefault(identifier, index)
        self.by_identity: dict[int, int] = {id(item): index for index, item in enumerate(self.items)}

    def __len__(self) -> int:
        return len(self.items)

    def id_of(self, item: Any) -> str | None:
        """The id of ``item`` (one of :attr:`items`, else read from it); ``None`` for an env without tasks."""
        if not self.has_tasks:
            return None
        index = self.by_identity.get(id(item))
        if index is None:
            index = self._equal(item)
        return self.ids[index] if index is not None else task_id(item, -1)

    def find(self, task: Any, env_id: str) -> tuple[int, Any]:
        """``(index, item)`` of a task given by index, id or item (``None``: the first task).

        An item that is not one of :attr:`items` (nor equal to the one with its id) comes back
        as ``(-1, task)``: the env factory gets it as it is.

        Raises:
            TaskNotFound: an index out of range, an unknown id, or any task of an env without tasks.
        """
        if task is None:
            return 0, self.items[0]
        if not self.has_tasks:
            raise TaskNotFound(f"environment '{env_id}' has no tasks; drop task={task!r}")
        if isinstance(task, bool):
            raise TypeError("task must be an index, a task id or a task item")
        if isinstance(task, int):
            count = len(self.items)
            if not -count <= task < count:
                raise TaskNotFound(f"environment '{env_id}' has {count} tasks (0..{count - 1}); got index {task}")
            return task % count, self.items[task]
        if isinstance(task, str):
            index = self.by_id.get(task)
            if index is None:
                raise TaskNotFound(f"environment '{env_id}' has no task '{task}'.{did_you_mean(task, self.ids)}")
            return index, self.items[index]
        index = self.by_identity.get(id(task))
        if index is None:
            index = self._equal(task)
        return (-1, task) if index is None else (index, self.items[index])

    def _equal(self, task: Any) -> int | None:
        """The index of an item equal to ``task``: through its id (O(1)), or a scan for items without ids."""
        if _field(task, "id", "task_id", "example_id") is None:
            return next((index for index, item in enumerate(self.items) if item == task), None)
        index = self.by_id.get(task_id(task, -1))
        return index if index is not None and self.items[index] == task else None
