"""``paramsSchema``: the SDK's argument shorthand and its expansion to a JSON schema.

The shorthand maps each argument to a type name, ``{"order_id": "string", "amount": "number"}``;
a value may also be a JSON schema of its own (``{"type": "string", "enum": [...]}``). Every
argument is required and no other argument is allowed, as in the SDK. A whole JSON schema
(``{"type": "object", "properties": {...}}``) is accepted as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PARAM_TYPES", "check_param_type", "expand_params_schema", "is_full_json_schema"]

PARAM_TYPES = ("string", "number", "integer", "boolean", "object", "array")
"""The type names the shorthand accepts."""

_JSON_TYPES = (*PARAM_TYPES, "null")


def is_full_json_schema(schema: Mapping[str, Any]) -> bool:
    """True when ``schema`` is a complete object schema rather than the shorthand."""
    return schema.get("type") == "object" and isinstance(schema.get("properties"), Mapping)


def check_param_type(value: Any) -> Any:
    """Validate one shorthand value: a type name or a JSON schema object.

    Raises:
        ValueError: an unknown type name (``unknown type 'nubmer'``) or a malformed schema.
    """
    if isinstance(value, str):
        if value not in PARAM_TYPES:
            from rolloutgym_protocol.errors import did_you_mean

            raise ValueError(
                f"unknown type {value!r}.{did_you_mean(value, PARAM_TYPES)} Use one of: {', '.join(PARAM_TYPES)}"
            )
        return value
    if isinstance(value, Mapping):
        declared = value.get("type")
        names = declared if isinstance(declared, list) else [declared] if declared is not None else []
        for name in names:
            if name not in _JSON_TYPES:
                raise ValueError(f"unknown JSON schema type {name!r}; use one of: {', '.join(_JSON_TYPES)}")
        return dict(value)
    raise ValueError(
        f"expected a type name ({', '.join(PARAM_TYPES)}) or a JSON schema object, got {type(value).__name__}"
    )


def expand_params_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The JSON schema a model sees for a tool's arguments.

    ``None`` or ``{}`` gives an object schema with no arguments.
    """
    if not schema:
        return {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    if is_full_json_schema(schema):
        return dict(schema)
    properties = {name: ({"type": value} if isinstance(value, str) else dict(value)) for name, value in schema.items()}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
