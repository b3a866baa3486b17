"""Text for any value, for people and models: functions that never raise.

Tool results, observations, state diffs, feedback, error messages, reports and logs turn
values into text, and some values refuse: Python will not print an integer longer than
its int-to-text limit (:func:`sys.set_int_max_str_digits`, 4300 digits by default) — not
with :func:`str`, :func:`repr`, f-strings nor :func:`json.dumps` — and a ``__repr__`` may
raise. A policy can send such a value in a tool argument and an env can compute one, so
every place that renders a value uses these functions:

* :func:`int_text` — an integer as text: its digits while Python prints them, else a
  bounded form, ``about 7.00000e+5000 (an integer too long to print)``, computed without
  the quadratic decimal conversion the limit guards against.
* :func:`safe_repr` / :func:`safe_str` — :func:`repr` / :func:`str` of any value; the same
  text whenever those succeed.
* :func:`json_text` — JSON text of any value (a tool result, an observation's data): what
  :func:`json.dumps` writes whenever it can; otherwise the same document with integers too
  long to print as strings (:func:`int_text`), objects as :func:`safe_str`, cycles and
  nesting deeper than :data:`MAX_DEPTH` cut.

Records are written losslessly by :mod:`rolloutgym_protocol.jsonvalues` instead (a run
file keeps every digit); these functions are for text meant to be read.
"""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "int_text", "json_text", "safe_repr", "safe_str"]

MAX_DEPTH = 64
""":func:`json_text` writes containers nested deeper than this as ``"…"``."""


def int_text(number: int) -> str:
    """``str(number)`` while Python prints it, else ``about 1.23457e+5000 (an integer too long to print)``."""
    number = int(number)
    try:
        return int.__repr__(number)
    except ValueError:  # past sys.get_int_max_str_digits()
        pass
    sign = "-" if number < 0 else ""
    exponent_float = math.log10(abs(number))  # exact enough for six digits: logs of ints never overflow
    exponent = math.floor(exponent_float)
    mantissa = f"{10 ** (exponent_float - exponent):.5f}"
    if mantissa.startswith("10"):
        mantissa, exponent = "1.00000", exponent + 1
    return f"about {sign}{mantissa}e+{exponent} (an integer too long to print)"


class _SafeRepr(reprlib.Repr):
    """``reprlib`` with integers as :func:`int_text` writes them (its other limits bound the text)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 8
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdeque = 50
        self.maxstring = self.maxother = 2000
        self.maxlong = 10**9  # int_text bounds integers itself

    def repr_int(self, x: int, level: int) -> str:
        return int_text(x)

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = repr(x)
        except Exception:
            return f"<{type(x).__qualname__} object>"
        return text if len(text) <= self.maxother else text[: self.maxother] + "…"


_SAFE_REPR = _SafeRepr()


def safe_repr(value: Any) -> str:
    """``repr(value)``, or when that raises (an integer too long to print inside, a broken
    ``__repr__``) a bounded repr with such integers as :func:`int_text` writes them."""
    try:
        text = repr(value)
        if isinstance(text, str):
            return text
    except Exception:
        pass
    if type(value) is int or (isinstance(value, int) and not isinstance(value, bool)):
        return int_text(value)
    try:
        return _SAFE_REPR.repr(value)
    except Exception:
        return f"<{type(value).__qualname__} object>"


def safe_str(value: Any) -> str:
    """``str(value)``, or :func:`safe_repr` of it when that raises."""
    if type(value) is str:
        return value
    try:
        text = str(value)
        if isinstance(text, str):
            return text
    except Exception:
        pass
    return safe_repr(value)


def _key(key: Any) -> Any:
    if key is None or isinstance(key, (str, bool, float)):
        return key
    if isinstance(key, int):
        return int_text(key)
    return safe_str(key)


def _displayable(value: Any, depth: int, path: set[int], default: Callable[[Any], str]) -> Any:
    """``value`` with what :func:`json.dumps` refuses replaced (see :func:`json_text`)."""
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, int):
        try:
            int.__repr__(value)
        except ValueError:
            return int_text(value)
        return int(value)
    if not isinstance(value, (Mapping, list, tuple)):
        try:
            text = default(value)
        except Exception:
            return safe_repr(value)
        return text if isinstance(text, str) else safe_repr(text)
    if depth >= MAX_DEPTH:
        return "…"
    if id(value) in path:
        return "[...]" if not isinstance(value, Mapping) else "{...}"
    path.add(id(value))
    try:
        if isinstance(value, Mapping):
            return {_key(key): _displayable(item, depth + 1, path, default) for key, item in value.items()}
        return [_displayable(item, depth + 1, path, default) for item in value]
    finally:
        path.discard(id(value))


def json_text(
    value: Any,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    ensure_ascii: bool = False,
    default: Callable[[Any], str] = safe_str,
) -> str:
    """JSON text of any value, for reading (a tool result, the data in an observation).

    Exactly :func:`json.dumps` whenever that succeeds (objects JSON has no form for as
    ``default`` writes them: :func:`safe_str`, or e.g. :func:`safe_repr`); otherwise the same
    document with integers too long to print as strings (``"about 7.00000e+5000 (an integer
    too long to print)"``), cycles as ``"[...]"``, nesting deeper than :data:`MAX_DEPTH` as
    ``"…"``, and keys as text. Never raises.
    """
    try:
        return json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, default=default)
    except Exception:  # too long an int, a cycle, deep nesting, a key JSON refuses, a failing default
        pass
    try:
        displayable = _displayable(value, 0, set(), default)
        try:
            return json.dumps(displayable, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
        except TypeError:  # keys of mixed types cannot be sorted
            return json.dumps(displayable, indent=indent, ensure_ascii=ensure_ascii)
    except Exception:
        return json.dumps(safe_repr(value), ensure_ascii=ensure_ascii)
