"""State paths: ``refunds[0].amount``, ``orders.O-1.status``, ``refunds.length``, ``files.src/a\\.py``.

Syntax:

* segments are separated by ``.``; ``[N]`` indexes a list (``grid[0][1]`` nests);
* a backslash escapes the next character (``files.src/a\\.py`` is the key ``src/a.py``), or
  quote a key in brackets: ``files["src/a.py"]``;
* a final bare ``length`` gives the length of the value before it (0 when it is missing),
  unless that value is an object with a ``length`` key; ``["length"]`` always means the key;
* for :func:`set_path`, a final ``[]`` appends (``notes[]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["APPEND", "LENGTH", "PathError", "format_path", "get_path", "parse_path", "set_path"]


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


LENGTH = _Marker("LENGTH")
"""The final ``.length`` segment."""
APPEND = _Marker("APPEND")
"""The final ``[]`` segment."""

Segment = str | int | _Marker

_CACHE: dict[str, tuple[Segment, ...]] = {}


class PathError(ValueError):
    """A malformed path, or a write that the state's shape does not allow."""


def parse_path(path: str) -> tuple[Segment, ...]:
    """Split a path into keys (str), indices (int) and the LENGTH/APPEND markers.

    Raises:
        PathError: an empty path, an unclosed bracket or a bad index.
    """
    cached = _CACHE.get(path)
    if cached is not None:
        return cached
    if not isinstance(path, str) or not path:
        raise PathError("a path must be a non-empty string")
    segments: list[Segment] = []
    current: list[str] = []
    bare = False  # whether the current segment was written without quotes
    position = 0
    size = len(path)

    def flush() -> None:
        nonlocal bare
        if current:
            segments.append("".join(current))
            current.clear()
        bare = False

    while position < size:
        character = path[position]
        if character == "\\" and position + 1 < size:
            current.append(path[position + 1])
            position += 2
            continue
        if character == ".":
            if not current and (not segments or path[position - 1] not in "]"):
                raise PathError(f"empty segment in path {path!r}")
            flush()
            position += 1
            continue
        if character == "[":
            flush()
            end = path.find("]", position)
            if end < 0:
                raise PathError(f"unclosed '[' in path {path!r}")
            inner = path[position + 1 : end].strip()
            if inner == "":
                if end + 1 != size:
                    raise PathError(f"'[]' (append) may only end a path: {path!r}")
                segments.append(APPEND)
            elif inner[0] in "\"'" and len(inner) >= 2 and inner[-1] == inner[0]:
                segments.append(inner[1:-1])
            elif inner.lstrip("-").isdigit():
                segments.append(int(inner))
            else:
                raise PathError(f'bad index [{inner}] in path {path!r}; use [N] or ["key"]')
            position = end + 1
            continue
        current.append(character)
        bare = True
        position += 1
    if current:
        text = "".join(current)
        if bare and text == "length" and segments and not path.endswith("\\length") and path.endswith(".length"):
            segments.append(LENGTH)
        else:
            segments.append(text)
    if not segments:
        raise PathError(f"empty path {path!r}")
    result = tuple(segments)
    if len(_CACHE) < 4096:
        _CACHE[path] = result
    return result


def format_path(segments: tuple[Segment, ...] | list[Segment]) -> str:
    """The inverse of :func:`parse_path` for display (``refunds[0].amount``)."""
    text = ""
    for segment in segments:
        if segment is LENGTH:
            text += ".length"
        elif segment is APPEND:
            text += "[]"
        elif isinstance(segment, int):
            text += f"[{segment}]"
        else:
            key = str(segment)
            escaped = key.replace("\\", "\\\\").replace(".", "\\.").replace("[", "\\[")
            text += f".{escaped}" if text else escaped
    return text


def get_path(state: Any, path: str | tuple[Segment, ...]) -> tuple[bool, Any]:
    """``(found, value)`` at ``path``; ``.length`` of a missing value is ``(True, 0)``."""
    segments = parse_path(path) if isinstance(path, str) else path
    current = state
    for position, segment in enumerate(segments):
        if segment is LENGTH:
            if isinstance(current, Mapping) and "length" in current:
                return True, current["length"]
            try:
                return True, len(current) if current is not None else 0
            except TypeError:
                return True, 0
        if isinstance(segment, int):
            if isinstance(current, list) and -len(current) <= segment < len(current):
                current = current[segment]
                continue
            return _missing_then_length(segments, position)
        if isinstance(current, Mapping) and segment in current:
            current = current[segment]
            continue
        return _missing_then_length(segments, position)
    return True, current


def _missing_then_length(segments: tuple[Segment, ...], position: int) -> tuple[bool, Any]:
    if segments[-1] is LENGTH:
        return True, 0
    return False, None


def set_path(state: dict[str, Any], path: str | tuple[Segment, ...], value: Any) -> None:
    """Set ``value`` at ``path`` (creating objects on the way), or append with a final ``[]``.

    Raises:
        PathError: the path crosses a value that is not an object/list, or an index is out of range.
    """
    segments = parse_path(path) if isinstance(path, str) else path
    if segments[-1] is LENGTH:
        raise PathError("cannot write to '.length'")
    current: Any = state
    for position, segment in enumerate(segments[:-1]):
        following = segments[position + 1]
        if isinstance(segment, int):
            if not isinstance(current, list) or not -len(current) <= segment < len(current):
                raise PathError(f"{format_path(segments[: position + 1])}: index out of range")
            current = current[segment]
            continue
        if not isinstance(current, dict):
            raise PathError(f"{format_path(segments[:position]) or 'state'} is not an object")
        if segment not in current or current[segment] is None:
            current[segment] = [] if following is APPEND else {}
        current = current[segment]
    last = segments[-1]
    if last is APPEND:
        if not isinstance(current, list):
            raise PathError(f"{format_path(segments[:-1])} is not a list; cannot append")
        current.append(value)
    elif isinstance(last, int):
        if not isinstance(current, list) or not -len(current) <= last < len(current):
            raise PathError(f"{format_path(segments)}: index out of range")
        current[last] = value
    else:
        if not isinstance(current, dict):
            raise PathError(f"{format_path(segments[:-1]) or 'state'} is not an object")
        current[last] = value
