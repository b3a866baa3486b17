"""Encoding half of :mod:`rolloutgym_protocol.jsonvalues`: any value to strict JSON data.

The tagged forms are described in :mod:`rolloutgym_protocol.jsonvalues` (the public module);
:mod:`rolloutgym_protocol._jsondecode` reads them back.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import re
from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 64
"""Containers nested deeper than this are written in the flat ``$deep`` form."""

_INT_LIMIT = 2**63 - 1
_TAGS = frozenset({"$float", "$int", "$str", "$bytes", "$map", "$deep", "$object"})
_SURROGATES = re.compile("[\ud800-\udfff]")
_REPR_LIMIT = 10_000


@dataclasses.dataclass(frozen=True)
class OpaqueValue:
    """An object JSON has no form for, as read back from a record: its type name and repr."""

    type: str
    repr: str

    def __repr__(self) -> str:
        return self.repr


def _has_surrogates(text: str) -> bool:
    return not text.isascii() and _SURROGATES.search(text) is not None


def strict_text(text: str) -> str:
    """``text`` made encodable as UTF-8 for fields that must stay strings (messages,
    feedback, ids): each lone surrogate becomes its escape text, e.g. ``\\ud800``."""
    if text.isascii() or _SURROGATES.search(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _encode_str(text: str) -> Any:
    if text.isascii() or _SURROGATES.search(text) is None:
        return text
    chunks: list[str | int] = []
    position = 0
    for match in _SURROGATES.finditer(text):
        if match.start() > position:
            chunks.append(text[position : match.start()])
        chunks.append(ord(match.group()))
        position = match.end()
    if position < len(text):
        chunks.append(text[position:])
    return {"$str": chunks}


def _encode_int(number: int) -> Any:
    if -_INT_LIMIT <= number <= _INT_LIMIT:
        return number
    if number.bit_length() <= 10_000:  # well under the 4300-digit str() limit
        return {"$int": str(number)}
    return {"$int": hex(number)}


def _encode_float(number: float) -> Any:
    if math.isfinite(number):
        return number
    return {"$float": "nan" if number != number else ("inf" if number > 0 else "-inf")}


def _key_text(key: Any) -> str:
    """A dict key as JSON object keys must be: text (non-strings as :func:`json.dumps` writes them)."""
    if isinstance(key, str):
        return str(key)
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, int):
        number = int(key)
        return str(number) if number.bit_length() <= 10_000 else hex(number)
    if isinstance(key, float):
        return (
            repr(float(key)) if math.isfinite(key) else {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[str(key)]
        )
    try:
        return str(key)
    except Exception:
        return _describe(key)["$object"]["type"]


def _describe(value: Any) -> dict[str, Any]:
    kind = type(value)
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not break recording
        text = f"<{kind.__qualname__} object>"
    if not isinstance(text, str):
        text = f"<{kind.__qualname__} object>"
    if len(text) > _REPR_LIMIT:
        text = text[:_REPR_LIMIT] + "…"
    return {"$object": {"type": f"{kind.__module__}.{kind.__qualname__}", "repr": _encode_str(text)}}


def _sort_key(item: Any) -> tuple[str, str]:
    try:
        return (type(item).__name__, repr(item))
    except Exception:
        return (type(item).__name__, "")


def _expand(value: Any) -> tuple[bool, Any]:
    """One step towards JSON for a value that is not a plain scalar, list or dict.

    Returns ``(True, json_value)`` when the result is final (a scalar or a tagged dict),
    else ``(False, container)``: a dict or list whose items still need encoding.
    """
    if isinstance(value, bool):
        return True, bool(value)
    if isinstance(value, int):
        return True, _encode_int(int(value))
    if isinstance(value, float):
        return True, _encode_float(float(value))
    if isinstance(value, str):
        return True, _encode_str(str(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return True, {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, OpaqueValue):
        return True, {"$object": {"type": value.type, "repr": _encode_str(value.repr)}}
    if isinstance(value, (list, tuple)):
        return False, list(value)
    try:
        if isinstance(value, Mapping):
            return False, dict(value.items())
        if isinstance(value, (set, frozenset)):
            try:
                return False, sorted(value)
            except TypeError:  # mixed types
                return False, sorted(value, key=_sort_key)
        tolist = getattr(value, "tolist", None)
        if callable(tolist) and not isinstance(value, type):  # numpy scalars and arrays
            return False, [tolist()]
        to_dict = getattr(value, "to_dict", None) or getattr(value, "model_dump", None)
        if callable(to_dict) and not isinstance(value, type):  # records, Scores, pydantic models
            data = to_dict()
            if getattr(type(value), "__strict_json__", False) and isinstance(data, dict):
                return True, data  # already encoded by its own to_dict()
            if isinstance(data, dict):
                return False, data
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return False, {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    except Exception:  # a broken container or conversion method: keep its description
        pass
    return True, _describe(value)


def _encode_dict(mapping: dict[Any, Any], depth: int) -> dict[str, Any]:
    encoded = {}
    for key, item in mapping.items():
        if type(key) is not str or not key.isascii():
            return _encode_unusual_dict(mapping, depth)
        encoded[key] = _encode(item, depth)
    if len(encoded) == 1 and next(iter(encoded)) in _TAGS:  # a dict that would read as a tag
        ((key, item),) = encoded.items()
        return {"$map": [[key, item]]}
    return encoded


def _encode_unusual_dict(mapping: dict[Any, Any], depth: int) -> dict[str, Any]:
    """Keys that are not ASCII strings: stringify (as json.dumps does), ``$map`` when needed."""
    keys = list(mapping)
    texts = [_key_text(key) for key in keys]
    if (
        (len(texts) == 1 and texts[0] in _TAGS)
        or any(_has_surrogates(text) for text in texts)
        or len(set(texts)) < len(texts)
    ):
        return {
            "$map": [[_encode_str(text), _encode(mapping[key], depth)] for text, key in zip(texts, keys, strict=True)]
        }
    return {text: _encode(mapping[key], depth) for text, key in zip(texts, keys, strict=True)}


def _encode(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind is str:
        return value if value.isascii() else _encode_str(value)
    if kind is int:
        return value if -_INT_LIMIT <= value <= _INT_LIMIT else _encode_int(value)
    if kind is float:
        return value if value - value == 0.0 else _encode_float(value)
    if value is None or kind is bool:
        return value
    if depth >= MAX_DEPTH:
        return {"$deep": _flatten(value)}
    depth += 1
    if kind is dict:
        return _encode_dict(value, depth)
    if kind is list or kind is tuple:
        return [_encode(item, depth) for item in value]
    final, expanded = _expand(value)
    if final:
        return expanded
    if type(expanded) is dict:
        return _encode_dict(expanded, depth)
    if getattr(value, "tolist", None) is not None and type(expanded) is list and len(expanded) == 1:
        return _encode(expanded[0], depth)  # numpy: tolist() gives a scalar or a nested list
    return [_encode(item, depth) for item in expanded]


_SCALARS = (str, int, float, bool, type(None))


def _flatten(root: Any) -> list[Any]:
    """Pre-order nodes of ``root`` without recursion (see the module docstring)."""
    nodes: list[Any] = []
    stack: list[Any] = [root]
    path: list[int] = []  # ids of the containers above the next value (cycle detection)
    remaining: list[int] = []  # items still to come for each container on the path
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _SCALARS:
            nodes.append(["value", _encode(value, 0)])
            _close_finished(path, remaining)
            continue
        origin = id(value)
        if origin in path:
            text = "{...}" if isinstance(value, Mapping) else "[...]"
            nodes.append(["value", {"$object": {"type": f"{kind.__module__}.{kind.__qualname__}", "repr": text}}])
            _close_finished(path, remaining)
            continue
        if kind is dict or kind is list or kind is tuple:
            container: Any = value
        else:
            final, container = _expand(value)
            if final:
                nodes.append(["value", container])
                _close_finished(path, remaining)
                continue
            if getattr(value, "tolist", None) is not None and type(container) is list and len(container) == 1:
                container = container[0]  # numpy: the tolist() value itself
                if type(container) in _SCALARS:
                    nodes.append(["value", _encode(container, 0)])
                    _close_finished(path, remaining)
                    continue
        if type(container) is dict:
            keys = list(container)
            nodes.append(["dict", [_encode_str(_key_text(key)) for key in keys]])
            children = [container[key] for key in keys]
        else:
            children = list(container)
            nodes.append(["list", len(children)])
        if children:
            stack.extend(reversed(children))
            path.append(origin)
            remaining.append(len(children))
        else:
            _close_finished(path, remaining)
    return nodes


def _close_finished(path: list[int], remaining: list[int]) -> None:
    """One value of the innermost open container is done; close every finished container."""
    while remaining:
        remaining[-1] -= 1
        if remaining[-1] > 0:
            return
        remaining.pop()
        path.pop()


def to_jsonable(value: Any) -> Any:
    """``value`` as strict JSON data (see the module docstring); never raises for any value."""
    return _encode(value, 0)
