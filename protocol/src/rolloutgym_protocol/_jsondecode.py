"""Decoding half of :mod:`rolloutgym_protocol.jsonvalues`: the tagged forms back to values.

The tagged forms are described in :mod:`rolloutgym_protocol.jsonvalues` (the public module);
:mod:`rolloutgym_protocol._jsonencode` writes them.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from ._jsonencode import _TAGS, MAX_DEPTH, OpaqueValue


def _decode_str(chunks: Any) -> Any:
    if not isinstance(chunks, list):
        return None
    parts = []
    for chunk in chunks:
        if isinstance(chunk, str):
            parts.append(chunk)
        elif type(chunk) is int and 0xD800 <= chunk <= 0xDFFF:
            parts.append(chr(chunk))
        else:
            return None
    return "".join(parts)


def _decode_key(key: Any) -> Any:
    if isinstance(key, str):
        return key
    if isinstance(key, dict) and len(key) == 1 and "$str" in key:
        text = _decode_str(key["$str"])
        if text is not None:
            return text
    return json.dumps(key)


_MISSING = object()
# to_jsonable never nests deeper than about 2 * MAX_DEPTH (tags included); plain data deeper
# than this is returned undecoded rather than risking the interpreter's recursion limit.
_DECODE_DEPTH = 3 * MAX_DEPTH


def _decode_tag(tag: str, payload: Any, depth: int) -> Any:
    """The value of one tagged dict, or ``_MISSING`` when the payload is malformed."""
    if tag == "$float":
        return (
            {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(payload, _MISSING)
            if isinstance(payload, str)
            else _MISSING
        )
    if tag == "$int":
        if isinstance(payload, str):
            try:
                return int(payload, 16) if payload.lstrip("-").startswith("0x") else int(payload)
            except ValueError:
                return _MISSING
        return _MISSING
    if tag == "$str":
        text = _decode_str(payload)
        return _MISSING if text is None else text
    if tag == "$bytes":
        if isinstance(payload, str):
            try:
                return base64.b64decode(payload.encode("ascii"), validate=True)
            except (ValueError, UnicodeEncodeError):
                return _MISSING
        return _MISSING
    if tag == "$map":
        if isinstance(payload, list) and all(isinstance(pair, list) and len(pair) == 2 for pair in payload):
            return {_decode_key(key): _decode(item, depth) for key, item in payload}
        return _MISSING
    if tag == "$deep":
        return _unflatten(payload) if isinstance(payload, list) else _MISSING
    if tag == "$object":
        if isinstance(payload, dict) and isinstance(payload.get("type"), str):
            text = payload.get("repr")
            text = _decode_str(text["$str"]) if isinstance(text, dict) and "$str" in text else text
            if isinstance(text, str):
                return OpaqueValue(payload["type"], text)
        return _MISSING
    return _MISSING


def _decode(data: Any, depth: int = 0) -> Any:
    kind = type(data)
    if kind is dict:
        if len(data) == 1:
            ((key, payload),) = data.items()
            if key in _TAGS:
                value = _decode_tag(key, payload, depth)
                if value is not _MISSING:
                    return value
        if depth >= _DECODE_DEPTH:  # deeper than to_jsonable writes: left as it is
            return data
        return {key: _decode(item, depth + 1) for key, item in data.items()}
    if kind is list:
        if depth >= _DECODE_DEPTH:
            return data
        return [_decode(item, depth + 1) for item in data]
    return data


def _unflatten(nodes: list[Any]) -> Any:
    """Rebuild the value of ``$deep`` nodes iteratively; malformed nodes read as None."""
    root: list[Any] = []
    # Each open container: (container, keys or None, items still expected).
    open_containers: list[tuple[Any, list[Any] | None, list[int]]] = [(root, None, [1])]
    for node in nodes:
        if not open_containers:
            break
        if not (isinstance(node, list) and len(node) == 2):
            node = ["value", None]
        kind, payload = node
        if kind == "list" and type(payload) is int and payload >= 0:
            value: Any = []
            child: tuple[Any, list[Any] | None, list[int]] | None = (value, None, [payload]) if payload else None
        elif kind == "dict" and isinstance(payload, list):
            value = {}
            keys = [_decode_key(key) for key in payload]
            child = (value, keys, [len(keys)]) if keys else None
        else:
            value = _decode(payload) if kind == "value" else None
            child = None
        container, keys, left = open_containers[-1]
        if keys is None:
            container.append(value)
        else:
            container[keys[len(keys) - left[0]]] = value
        left[0] -= 1
        if child is not None:
            open_containers.append(child)
        while open_containers and open_containers[-1][2][0] == 0:
            open_containers.pop()
    return root[0] if root else None


def from_jsonable(data: Any) -> Any:
    """The value :func:`to_jsonable` encoded (plain JSON data comes back unchanged)."""
    return _decode(data)
