"""Pydantic validation errors as ``path: message`` lines, the way env files and configs report them.

Shared by env-file shapes (:mod:`rolloutgym.declarative.shapes`, and the template plugins'
validators that use it), verifier primitive parameters and anything else that checks a config
with a pydantic model: ``config.tools[2].name: required field is missing``.
"""

from __future__ import annotations

from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from rolloutgym_protocol.errors import ConfigError, did_you_mean

__all__ = ["DataRecord", "format_errors", "join_errors", "read_json_record", "read_jsonl_records", "validate_model"]

Record = TypeVar("Record", bound=BaseModel)


def _path(location: tuple[Any, ...], prefix: str) -> str:
    text = prefix
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "__schema__":
            continue
        else:
            text += f".{part}" if text else str(part)
    return text


def format_errors(exc: ValidationError, prefix: str, model: type[BaseModel] | None = None) -> list[str]:
    """One ``path: message`` line per pydantic error."""
    lines = []
    for error in exc.errors(include_url=False):
        location = tuple(error["loc"])
        message = str(error["msg"])
        if message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        if error["type"] == "extra_forbidden":
            known = list(model.model_fields) if model is not None and len(location) == 1 else []
            message = f"unknown field {str(location[-1])!r}.{did_you_mean(str(location[-1]), known)}"
            if known:
                message += f" Known fields: {', '.join(known)}."
        elif error["type"] == "string_pattern_mismatch" and location and location[-1] == "name":
            message = f"tool name {error.get('input')!r:.70} must be 1-64 letters, digits, '_' or '-'"
        elif error["type"] == "missing":
            message = "required field is missing"
        lines.append(f"{_path(location, prefix)}: {message}")
    return lines


def validate_model(model: type[BaseModel], data: Any, prefix: str) -> tuple[BaseModel | None, list[str]]:
    """Validate ``data`` with ``model``; returns the model (or None) and the error lines."""
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, format_errors(exc, prefix, model)


def join_errors(errors: list[str]) -> str:
    """One message for :class:`EnvFileError`: the line itself, or ``N problems:`` and one per line."""
    if len(errors) == 1:
        return errors[0]
    return f"{len(errors)} problems:\n  " + "\n  ".join(errors)


class DataRecord(BaseModel):
    """Base of the models of a plugin's ``data/`` files: unknown fields are errors, values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def read_jsonl_records(path: Path | Traversable, model: type[Record]) -> list[Record]:
    """The records of a JSON Lines data file, in file order, each checked by ``model``.

    A line that is not JSON, a missing, unknown or mistyped field, or a repeated ``id`` is a
    :class:`ConfigError` naming the file, the line and the field.
    """
    records: list[Record] = []
    lines_of_ids: dict[Any, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = _validate_json(line, model, f"{path}:{number}", "this line (one JSON object per line)")
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


def read_json_record(path: Path | Traversable, model: type[Record]) -> Record:
    """The one JSON document of a data file, checked by ``model`` (errors as for JSON Lines)."""
    return _validate_json(path.read_text(encoding="utf-8"), model, str(path), "the file")


def _validate_json(text: str, model: type[Record], where: str, what: str) -> Record:
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
