"""The task data shipped in the package's ``data/`` folder, read and checked on first use.

Task files are JSON Lines: one task per line, one JSON object, validated by a pydantic
model (a missing or unknown field, a wrong type or a repeated id is an error naming the
file, the line and the field). A world file is one JSON document of the env's fixtures.
The data is the source of truth: ground truth is not stored but replayed from each task's
reference actions when the environment is first built (``refund.py``, ``refund_conv.py``).

* ``refund_tasks.jsonl`` + ``refund_world.json``: ``workflow/refund-v0`` and ``-v1``.
* ``refund_conv_tasks.jsonl`` + ``refund_conv_world.json``: ``workflow/refund-conv-v0``.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from rolloutgym.validation import DataRecord, read_json_record, read_jsonl_records

__all__ = [
    "DataRecord",
    "RefundTaskRecord",
    "RefundWorldRecord",
    "data_file",
    "read_json",
    "read_jsonl",
    "refund_task_records",
    "refund_world",
]

Record = TypeVar("Record", bound=BaseModel)


class TaskMetadata(DataRecord):
    family: str
    skills: list[str]
    answer_terms: list[str]


class RefundTaskRecord(DataRecord):
    """One line of ``refund_tasks.jsonl`` / ``refund_conv_tasks.jsonl``."""

    id: str
    split: Literal["train", "dev", "test"]
    instruction: str
    user: dict[str, Any] | None = None  # conversations only: opening, persona, facts, ...
    reference_actions: list[dict[str, Any]]
    reference_answer: str
    metadata: TaskMetadata


class RefundWorldRecord(DataRecord):
    """``refund_world.json`` / ``refund_conv_world.json``: the env's read-only fixtures."""

    customers: list[dict[str, Any]]
    catalog: list[dict[str, Any]]
    orders: dict[str, dict[str, Any]]
    customer_orders: list[dict[str, Any]]


def data_file(name: str) -> Traversable:
    """``data/<name>`` inside the installed package."""
    return resources.files(__package__).joinpath("data", name)


def read_jsonl(source: str | Path | Traversable, model: type[Record]) -> list[Record]:
    """The records of a JSON Lines file (a name in ``data/`` or a path), in file order."""
    return read_jsonl_records(data_file(source) if isinstance(source, str) else source, model)


def read_json(source: str | Path | Traversable, model: type[Record]) -> Record:
    """The one JSON document of a file (a name in ``data/`` or a path)."""
    return read_json_record(data_file(source) if isinstance(source, str) else source, model)


def refund_task_records(name: str = "refund") -> list[RefundTaskRecord]:
    """The tasks of ``data/<name>_tasks.jsonl`` (``refund`` or ``refund_conv``)."""
    return read_jsonl(f"{name}_tasks.jsonl", RefundTaskRecord)


def refund_world(name: str = "refund") -> dict[str, Any]:
    """The fixtures of ``data/<name>_world.json`` as the workflow template reads them."""
    return read_json(f"{name}_world.json", RefundWorldRecord).model_dump()
