"""Template config validation: each template's plugin owns its shape; the core dispatches and formats.

``validate_config(template, config)`` finds the template's :class:`~rolloutgym_protocol.TemplateSpec`
in the registry and calls its ``validator`` entry point, ``validate(config, prefix) -> dict``,
which raises :class:`~rolloutgym_protocol.errors.EnvFileError` listing every problem as
``config.tools[2].paramsSchema.amount: unknown type 'nubmer'``. A template without a validator
(or not installed: compiling it then says which plugin to install) is only checked to be an object.

Plugins write their validators with the generic helpers re-exported here (from
:mod:`rolloutgym.validation`): :func:`validate_model` (a pydantic model, errors as
``path: message`` lines), :func:`format_errors` and :func:`join_errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rolloutgym_protocol.errors import EnvFileError

from ..registry import get_registry, import_entry_point
from ..validation import format_errors, join_errors, validate_model

__all__ = ["format_errors", "join_errors", "template_validator", "validate_config", "validate_model"]


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
