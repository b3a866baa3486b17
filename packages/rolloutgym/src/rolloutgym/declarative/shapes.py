"""Template config validation: each template's plugin owns its shape; the core dispatches and formats.

``validate_config(template, config)`` finds the template's :class:`~rolloutgym_protocol.TemplateSpec`
in the registry and calls its ``validator`` entry point, ``validate(config, prefix) -> dict``,
which raises :class:`~rolloutgym_protocol.errors.EnvFileError` listing every problem as
``config.tools[2].paramsSchema.amount: unknown type 'nubmer'``. A template without a validator
(or not installed: compiling it then says which plugin to install) is only checked to be an object.

Plugins write their validators with the generic helpers here: :func:`validate_model` (a pydantic
model, errors as ``path: message`` lines), :func:`format_errors` and :func:`join_errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from rolloutgym_protocol.errors import EnvFileError, did_you_mean

from ..registry import get_registry, import_entry_point

__all__ = ["format_errors", "join_errors", "template_validator", "validate_config", "validate_model"]


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


def template_validator(template: str, *, registry: Any = None) -> Callable[..., Any] | None:
    """The ``validator`` the plugin registering ``template`` names, imported; None when there is none."""
    registered = (registry or get_registry()).template_specs().get(template)
    reference = getattr(registered.spec, "validator", None) if registered is not None else None
    if not reference:
        return None
    return import_entry_point(reference, what=f"template {template!r} validator")


def validate_config(template: str, config: Any, *, prefix: str = "config", registry: Any = None) -> dict[str, Any]:
    """Check ``config`` against ``template``'s shape (its plugin's validator) and return it (unchanged).

    Raises:
        EnvFileError: every problem found, one ``path: message`` per line.
    """
    if not isinstance(config, Mapping):
        raise EnvFileError(f"{prefix}: the {template} template needs a JSON object, got {type(config).__name__}")
    validator = template_validator(template, registry=registry)
    if validator is None:
        return dict(config)
    return dict(validator(config, prefix))
