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

from pydantic import BaseModel, ConfigDict, ValidationError
from rolloutgym_protocol.errors import ConfigError

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


class DataRecord(BaseModel):
    """Base of the data file models: unknown fields are errors, values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


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
    path = data_file(source) if isinstance(source, str) else source
    records: list[Record] = []
    lines_of_ids: dict[Any, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = _validate(line, model, f"{path}:{number}", "this line (one JSON object per line)")
        identifier = getattr(record, "id", None)
        if identifier is not None:
            if identifier in lines_of_ids:
                raise ConfigError(
                    f"{path}:{number}: field 'id': {identifier!r} is already the id of line "
                    f"{lines_of_ids[identifier]}; give every task its own id"
                )
            lines_of_ids[identifier] = number
        records.append(record)
    return records


def read_json(source: str | Path | Traversable, model: type[Record]) -> Record:
    """The one JSON document of a file (a name in ``data/`` or a path)."""
    path = data_file(source) if isinstance(source, str) else source
    return _validate(path.read_text(encoding="utf-8"), model, str(path), "the file")


def _validate(text: str, model: type[Record], where: str, what: str) -> Record:
    try:
        return model.model_validate_json(text)
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        if problem["type"] == "json_invalid":
            raise ConfigError(f"{where}: not valid JSON ({problem['msg']}); fix {what}") from None
        field = ".".join(str(part) for part in problem["loc"]) or "(the object)"
        fields = ", ".join(model.model_fields)
        raise ConfigError(
            f"{where}: field {field!r}: {problem['msg']}; fix {what} ({model.__name__} has the fields {fields})"
        ) from None


def refund_task_records(name: str = "refund") -> list[RefundTaskRecord]:
    """The tasks of ``data/<name>_tasks.jsonl`` (``refund`` or ``refund_conv``)."""
    return read_jsonl(f"{name}_tasks.jsonl", RefundTaskRecord)


def refund_world(name: str = "refund") -> dict[str, Any]:
    """The fixtures of ``data/<name>_world.json`` as the workflow template reads them."""
    return read_json(f"{name}_world.json", RefundWorldRecord).model_dump()
