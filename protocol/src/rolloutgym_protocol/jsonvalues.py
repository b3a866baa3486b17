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

import base64
import dataclasses
import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "OpaqueValue", "dumps", "from_jsonable", "loads", "strict_text", "to_jsonable"]

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


# ---------------------------------------------------------------- decoding


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


def dumps(value: Any) -> str:
    """One line of strict JSON for ``value`` (UTF-8 safe, no ``NaN`` tokens, bounded nesting)."""
    return json.dumps(to_jsonable(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(text: str | bytes) -> Any:
    """Parse strict JSON (``NaN``/``Infinity`` tokens are refused) and decode the tagged forms."""
    return from_jsonable(json.loads(text, parse_constant=_reject_constant))
