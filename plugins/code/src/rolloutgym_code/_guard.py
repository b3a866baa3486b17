"""Exact-type comparisons for hidden tests (shipped read-only into the sandbox as a module).

Hidden test files are rewritten before they run: ``assert A == B`` (and ``!=``) becomes

    __rolloutgym_left__, __rolloutgym_right__ = __import__("rolloutgym_sandbox_guard").plain(A, B)
    assert __rolloutgym_left__ == __rolloutgym_right__

``plain`` lets a comparison through unchanged unless exactly one side is a *plain value*
(built from exact builtin types: ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``,
``bytes``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset``, and the exact ``date``,
``datetime``, ``time``, ``timedelta``, ``Decimal``, ``Fraction``, ``Counter``,
``OrderedDict``, ``defaultdict`` — the standard library's own classes, captured when this
module is imported, before any code under test runs), or from subclasses of them that
override no comparison, truth, container or arithmetic method (a ``namedtuple``, an
``IntEnum``) or a ``pytest.approx``: then
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


_BASES = tuple(_SCALARS | _CONTAINERS | _MAPPINGS)
# Methods through which a subclass could change what a comparison, a truth test, a lookup
# or arithmetic says; a subclass that defines none of them behaves like its builtin base.
_SENSITIVE = frozenset(
    """__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __hash__ __bool__ __len__ __iter__ __next__ __getitem__
    __contains__ __reversed__ keys items values get __index__ __int__ __float__ __complex__ __abs__ __neg__
    __pos__ __add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__
    __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __round__ __trunc__ __getattribute__ __getattr__ __class__
    __missing__ count index __array__ __array_ufunc__""".split()
)
_type_mro = type.__dict__["__mro__"].__get__
_type_dict = type.__dict__["__dict__"].__get__


def _plain_base(kind):
    """The builtin plain type ``kind`` behaves as (itself, or the base of a subclass that
    overrides nothing that matters, such as a ``namedtuple`` or an ``IntEnum``), else None."""
    if kind in _SCALARS or kind in _CONTAINERS or kind in _MAPPINGS:
        return kind
    mro = _type_mro(kind)  # the real MRO and class dicts: a metaclass cannot fake them
    for position, klass in enumerate(mro):
        if klass in _BASES:
            if any(_SENSITIVE.intersection(_type_dict(earlier)) for earlier in mro[:position]):
                return None
            return klass
    return None


def is_plain(value, _depth=0):
    """True when ``value`` is built only from plain types (see the module docstring)."""
    base = _plain_base(type(value))
    if base is None:
        return False
    if base in _SCALARS:
        return True
    if _depth > 50:
        return False
    if base in _CONTAINERS:
        return all(is_plain(item, _depth + 1) for item in base.__iter__(value))
    return all(is_plain(key, _depth + 1) and is_plain(item, _depth + 1) for key, item in dict.items(value))


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
