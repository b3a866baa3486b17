"""Lossless, always-valid JSON for any value a policy or an environment can produce.

Records (steps, trajectories, groups) hold whatever a policy said: ``NaN``, ``±inf`` (the
JSON text ``1e400`` parses as ``inf``), integers too large for a float or for Python's
4300-digit conversion limit, strings holding lone UTF-16 surrogates (``"\\ud800"``),
arguments nested hundreds of levels deep, ``bytes``, numpy scalars, arbitrary objects.
:func:`to_jsonable` turns every such value into strict JSON (no ``NaN``/``Infinity``
tokens, encodable as UTF-8, nesting bounded) and :func:`from_jsonable` turns it back, so
``from_jsonable(json.loads(json.dumps(to_jsonable(value))))`` equals ``value`` for every
JSON-like value (dicts with string keys, lists, str, int, float, bool, None, bytes).

Values plain JSON cannot hold become a one-key object whose key starts with ``$``:

==========================================  ==============================================
``{"$float": "nan" | "inf" | "-inf"}``      a non-finite float
``{"$int": "123…"}`` / ``{"$int": "0x…"}``  an int outside the signed 64-bit range
``{"$str": ["ab", 55296, "cd"]}``           a str with lone surrogates: text chunks and the
                                            surrogates' code points
``{"$bytes": "base64…"}``                   bytes / bytearray
``{"$map": [[key, value], …]}``             a dict whose keys need encoding, or a dict that
                                            would read as one of these tags
``{"$deep": [node, …]}``                    a subtree nested deeper than :data:`MAX_DEPTH`,
                                            flattened in pre-order (see below)
``{"$object": {"type": …, "repr": …}}``     an object JSON has no form for; read back as
                                            an :class:`OpaqueValue` (its type and repr)
==========================================  ==============================================

Tuples become lists, sets become sorted lists, numpy scalars and arrays their Python
values, :class:`~rolloutgym_protocol.Score`\\ s, records, pydantic models and dataclasses
their dicts, non-string dict keys ``str(key)`` (as :func:`json.dumps` does). A class whose
``to_dict()`` already returns encoded data says so with a ``__strict_json__ = True`` class
attribute (the records and :class:`~rolloutgym_protocol.Score` do).

``$deep`` nodes are ``["list", n]`` (a list whose ``n`` items follow), ``["dict", [keys]]``
(a dict whose values follow, one per key) and ``["value", scalar]``; encoding and decoding
them is iterative, so no nesting depth raises :class:`RecursionError` (a self-referencing
container is cut with an :class:`OpaqueValue` whose repr is ``[...]``/``{...}``).
"""

from __future__ import annotations

import json
from typing import Any

from ._jsondecode import from_jsonable
from ._jsonencode import MAX_DEPTH, OpaqueValue, strict_text, to_jsonable

__all__ = ["MAX_DEPTH", "OpaqueValue", "dumps", "from_jsonable", "loads", "strict_text", "to_jsonable"]


def dumps(value: Any) -> str:
    """One line of strict JSON for ``value`` (UTF-8 safe, no ``NaN`` tokens, bounded nesting)."""
    return json.dumps(to_jsonable(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(text: str | bytes) -> Any:
    """Parse strict JSON (``NaN``/``Infinity`` tokens are refused) and decode the tagged forms."""
    return from_jsonable(json.loads(text, parse_constant=_reject_constant))
