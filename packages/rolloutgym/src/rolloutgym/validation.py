"""Pydantic validation errors as ``path: message`` lines, the way env files and configs report them.

Shared by env-file shapes (:mod:`rolloutgym.declarative.shapes`, and the template plugins'
validators that use it), verifier primitive parameters and anything else that checks a config
with a pydantic model: ``config.tools[2].name: required field is missing``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from rolloutgym_protocol.errors import did_you_mean

__all__ = ["format_errors", "join_errors", "validate_model"]


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
