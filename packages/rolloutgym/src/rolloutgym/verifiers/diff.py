"""State diffs: what differs between an expected (sub)state and the actual one, in words.

``state_diff({"refunds": [{"order_id": "O-7", "amount": 100}]}, state)`` returns lines such as
``refunds[0].amount: expected 100, got 90`` or ``refunds: missing refund for order_id 'O-7'``.

Matching rules: objects match as subsets (the actual object may have more keys); lists
must have the same items (no missing, no extra); numbers match within ``tolerance``;
``True`` is not ``1`` and ``"1"`` is not ``1``. Lists of objects that share an id-like field
(``id`` or ``*_id``) are aligned by it; other lists are compared in order unless
``unordered`` is set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rolloutgym_protocol.display import int_text, json_text, safe_repr, safe_str

__all__ = ["describe_value", "state_diff", "values_match"]

_MAX_LINES = 20


def describe_value(value: Any, limit: int = 80) -> str:
    """A short JSON rendering of ``value`` for feedback (any value: see ``display.json_text``)."""
    text = int_text(value) if type(value) is int else json_text(value, sort_keys=True, default=safe_repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def values_match(expected: Any, actual: Any, *, tolerance: float = 0.0, unordered: bool = False) -> bool:
    """True when :func:`state_diff` finds no difference."""
    return not state_diff(expected, actual, tolerance=tolerance, unordered=unordered, limit=1)


def _scalar_equal(expected: Any, actual: Any, tolerance: float) -> bool:
    if _is_number(expected) and _is_number(actual):
        if expected != expected or actual != actual:  # NaN (no float() of ints past the float range)
            return False
        if expected == actual:
            return True
        try:
            return abs(expected - actual) <= tolerance
        except OverflowError:  # an int past the float range against a float: never within a tolerance
            return False
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return type(expected) is type(actual) and expected == actual if expected is not None else actual is None


def _singular(path: str) -> str:
    name = path.rsplit(".", 1)[-1].split("[", 1)[0]
    if name.endswith("ies") and len(name) > 4:
        return name[:-3] + "y"
    if name.endswith("s") and len(name) > 3:
        return name[:-1]
    return "item"


def _identity_key(expected: list[Any], actual: list[Any]) -> str | None:
    items = expected + actual
    if not items or not all(isinstance(item, Mapping) for item in items):
        return None
    common = set(items[0])
    for item in items[1:]:
        common &= set(item)
    candidates = sorted(key for key in common if key == "id" or key.endswith("_id"))
    for key in candidates:
        expected_values = [_hashable(item[key]) for item in expected]
        actual_values = [_hashable(item[key]) for item in actual]
        if len(set(expected_values)) == len(expected_values) and len(set(actual_values)) == len(actual_values):
            return key
    return None


def _hashable(value: Any) -> Any:
    return describe_value(value, limit=10_000)


def state_diff(
    expected: Any,
    actual: Any,
    *,
    path: str = "",
    tolerance: float = 0.0,
    unordered: bool = False,
    limit: int = _MAX_LINES,
) -> list[str]:
    """Every difference as a line of feedback (at most ``limit`` lines, then a summary)."""
    lines: list[str] = []
    _diff(expected, actual, path, tolerance, unordered, lines, limit)
    if len(lines) > limit:
        hidden = len(lines) - limit
        lines = lines[:limit] + [f"... and {hidden} more difference(s)"]
    return lines


def _label(path: str) -> str:
    return path or "state"


def _diff(
    expected: Any, actual: Any, path: str, tolerance: float, unordered: bool, lines: list[str], limit: int
) -> None:
    if len(lines) > limit:
        return
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            lines.append(f"{_label(path)}: expected an object {describe_value(expected)}, got {describe_value(actual)}")
            return
        for key, value in expected.items():
            child = f"{path}.{safe_str(key)}" if path else safe_str(key)
            if key not in actual:
                lines.append(f"{child}: missing (expected {describe_value(value)})")
            else:
                _diff(value, actual[key], child, tolerance, unordered, lines, limit)
        return
    if isinstance(expected, list):
        if not isinstance(actual, list):
            lines.append(f"{_label(path)}: expected a list {describe_value(expected)}, got {describe_value(actual)}")
            return
        _diff_lists(expected, actual, path, tolerance, unordered, lines, limit)
        return
    if not _scalar_equal(expected, actual, tolerance):
        lines.append(f"{_label(path)}: expected {describe_value(expected)}, got {describe_value(actual)}")


def _diff_lists(
    expected: list[Any], actual: list[Any], path: str, tolerance: float, unordered: bool, lines: list[str], limit: int
) -> None:
    noun = _singular(path)
    key = _identity_key(expected, actual)
    if key is not None:
        by_value = {_hashable(item[key]): (index, item) for index, item in enumerate(actual)}
        seen = set()
        for item in expected:
            marker = _hashable(item[key])
            if marker not in by_value:
                lines.append(
                    f"{_label(path)}: missing {noun} for {key} {describe_value(item[key])} (expected "
                    f"{describe_value(item)})"
                )
                continue
            seen.add(marker)
            actual_index, actual_item = by_value[marker]
            _diff(item, actual_item, f"{path}[{actual_index}]", tolerance, unordered, lines, limit)
        for item in actual:
            if _hashable(item[key]) not in seen:
                lines.append(
                    f"{_label(path)}: unexpected {noun} for {key} {describe_value(item[key])} ({describe_value(item)})"
                )
        return
    if unordered:
        remaining = list(range(len(actual)))
        for item in expected:
            match = next(
                (
                    index
                    for index in remaining
                    if values_match(item, actual[index], tolerance=tolerance, unordered=True)
                ),
                None,
            )
            if match is None:
                lines.append(f"{_label(path)}: missing {noun} {describe_value(item)}")
            else:
                remaining.remove(match)
        for index in remaining:
            lines.append(f"{_label(path)}: unexpected {noun} {describe_value(actual[index])}")
        return
    for index in range(max(len(expected), len(actual))):
        if index >= len(actual):
            lines.append(
                f"{_label(path)}: missing {noun} {describe_value(expected[index])} (expected {len(expected)} items, "
                f"got {len(actual)})"
            )
        elif index >= len(expected):
            lines.append(
                f"{_label(path)}: unexpected {noun} {describe_value(actual[index])} (expected {len(expected)} items, "
                f"got {len(actual)})"
            )
        else:
            _diff(expected[index], actual[index], f"{path}[{index}]", tolerance, unordered, lines, limit)
