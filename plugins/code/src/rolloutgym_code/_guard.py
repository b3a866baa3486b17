"""Exact-type comparisons for hidden tests (shipped read-only into the sandbox as a module).

Hidden test files are rewritten before they run: ``assert A == B`` (and ``!=``) becomes

    __rolloutgym_left__, __rolloutgym_right__ = __import__("rolloutgym_sandbox_guard").plain(A, B)
    assert __rolloutgym_left__ == __rolloutgym_right__

``plain`` lets a comparison through unchanged unless exactly one side is a *plain value*
(built from exact builtin types: ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``,
``bytes``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset``, and the exact ``date``,
``datetime``, ``time``, ``timedelta``, ``Decimal``, ``Fraction``, ``Counter``,
``OrderedDict``, ``defaultdict`` — the standard library's own classes, captured when this
module is imported, before any code under test runs) or a ``pytest.approx``: then
the other side must be plain too. An object whose ``__eq__`` always answers ``True`` (or a
subclass of ``int``/``str`` that lies) therefore fails where a plain value is expected.
``type()`` cannot be faked by the object, unlike ``__class__`` or ``isinstance``.
"""

import collections
import datetime
import decimal
import fractions

_SCALARS = frozenset(
    {
        type(None), bool, int, float, complex, str, bytes,
        datetime.date, datetime.datetime, datetime.time, datetime.timedelta, decimal.Decimal, fractions.Fraction,
    }
)  # fmt: skip
_CONTAINERS = frozenset({list, tuple, set, frozenset})
_MAPPINGS = frozenset({dict, collections.Counter, collections.OrderedDict, collections.defaultdict})


def is_plain(value, _depth=0):
    """True when ``value`` is built only from exact plain types (see the module docstring)."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if _depth > 50:
        return False
    if kind in _CONTAINERS:
        return all(is_plain(item, _depth + 1) for item in value)
    if kind in _MAPPINGS:
        return all(is_plain(key, _depth + 1) and is_plain(item, _depth + 1) for key, item in dict.items(value))
    return False


def _is_expectation(value):
    kind = type(value)
    return is_plain(value) or (kind.__module__ == "_pytest.python_api" and kind.__name__.startswith("Approx"))


def plain(left, right):
    """``(left, right)`` unchanged, or ``AssertionError`` when one side is a plain value
    (or ``pytest.approx``) and the other is not."""
    if _is_expectation(right) and not is_plain(left):
        raise AssertionError(
            f"expected a plain {type(right).__name__} value, got an object of type {type(left).__qualname__}"
        )
    if _is_expectation(left) and not is_plain(right):
        raise AssertionError(
            f"expected a plain {type(left).__name__} value, got an object of type {type(right).__qualname__}"
        )
    return left, right


def member(element, container):
    """``(element, container)`` unchanged, or ``AssertionError`` when ``container`` is a plain
    value and ``element`` is not (``in`` would ask the element's own ``__eq__``)."""
    if is_plain(container) and not is_plain(element):
        raise AssertionError(
            f"expected a plain value to look up in a {type(container).__name__}, got an object of type "
            f"{type(element).__qualname__}"
        )
    return element, container


def truth(value):
    """``value`` unchanged when it is plain (its truth is then the builtin one), else
    ``AssertionError``: an object cannot decide its own truth in an ``assert``."""
    if not is_plain(value):
        raise AssertionError(f"expected a plain value (e.g. a bool), got an object of type {type(value).__qualname__}")
    return value
