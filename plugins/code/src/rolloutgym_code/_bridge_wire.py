"""The plain values of the bridge's wire format, for :mod:`rolloutgym_code._bridge`.

The checks that decoded JSON has the shape a message needs, the values with a tag of their own
(``complex``, ``date``/``datetime``/``time``/``timedelta``, ``Decimal``, ``Fraction``), the
namedtuple classes made here, and the exception classes an error from the sandbox may name
(builtin, or standard-library classes already loaded here); and :class:`RemoteError`.

Only the standard library is used: this file is copied next to the trusted runner.
"""

import builtins
import datetime
import decimal
import fractions
import keyword
import operator
import sys
import types


class RemoteError(Exception):
    """The code under test did not answer with plain data, raised something that is not an
    exception, or stopped answering."""


_ISO = {"date": datetime.date, "dt": datetime.datetime, "time": datetime.time}


def _namedtuple_class(name, fields):
    """A tuple subclass with named fields, made without ``collections.namedtuple`` (which
    compiles code from the names): comparison, hashing and truth are ``tuple``'s."""
    if not name.isidentifier() or keyword.iskeyword(name) or len(fields) > 100 or len(set(fields)) != len(fields):
        raise TypeError("a namedtuple with an invalid name or fields")
    if not all(field.isidentifier() and not keyword.iskeyword(field) and not field.startswith("_") for field in fields):
        raise TypeError("a namedtuple with an invalid field name")
    namespace = {"__slots__": (), "_fields": fields, "__module__": "code_under_test"}
    namespace.update({field: property(operator.itemgetter(index)) for index, field in enumerate(fields)})
    namespace["__repr__"] = lambda self: f"{name}{tuple.__repr__(self)}"
    namespace["_asdict"] = lambda self: dict(zip(fields, self, strict=True))
    return type(name, (tuple,), namespace)


def _list(value):
    if type(value) is not list:
        raise TypeError("expected a list")
    return value


def _dict(value):
    if type(value) is not dict:
        raise TypeError("expected an object")
    return value


def _str(value):
    if type(value) is not str:
        raise TypeError("expected a string")
    return value


def _pair(value):
    if type(value) is not list or len(value) != 2:
        raise TypeError("expected a pair")
    return value


def _encode_special(value, kind):
    if kind is complex:
        return {"$": "c", "v": [value.real, value.imag]}
    if kind in (datetime.date, datetime.datetime, datetime.time):
        return {
            "$": {datetime.date: "date", datetime.datetime: "dt", datetime.time: "time"}[kind],
            "v": value.isoformat(),
        }
    if kind is datetime.timedelta:
        return {"$": "td", "v": [value.days, value.seconds, value.microseconds]}
    if kind is decimal.Decimal:
        return {"$": "dec", "v": str(value)}
    if kind is fractions.Fraction:
        return {"$": "frac", "v": [value.numerator, value.denominator]}
    return None


def _decode_special(tag, items):
    if tag == "c":
        real, imaginary = _list(items)
        if type(real) not in (int, float) or type(imaginary) not in (int, float):
            raise TypeError("a complex number of non-numbers")
        return complex(real, imaginary)
    if tag in _ISO:
        return _ISO[tag].fromisoformat(_str(items)[:64])
    if tag == "td":
        days, seconds, microseconds = _list(items)
        if not all(type(part) is int for part in (days, seconds, microseconds)):
            raise TypeError("a timedelta of non-integers")
        return datetime.timedelta(days, seconds, microseconds)
    if tag == "dec":
        return decimal.Decimal(_str(items)[:1000])
    if tag == "frac":
        numerator, denominator = _list(items)
        if type(numerator) is not int or type(denominator) is not int:
            raise TypeError("a fraction of non-integers")
        return fractions.Fraction(numerator, denominator)
    raise TypeError(f"unknown wire tag {str(tag)[:20]!r}")


def _builtin_exception(name):
    if type(name) is not str:
        return None
    cls = vars(builtins).get(name)
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls
    return None


def _standard_exception(standard):
    """A standard-library exception class already loaded here (never imported for the sandbox)."""
    if type(standard) is not list or len(standard) != 2 or not all(type(part) is str for part in standard):
        return None
    module = sys.modules.get(standard[0])
    if (
        module is None
        or standard[0].split(".")[0] not in sys.stdlib_module_names
        or type(module) is not types.ModuleType
    ):
        return None
    value = module
    for part in standard[1].split("."):
        value = vars(value).get(part) if isinstance(value, (type, types.ModuleType)) else None
    if isinstance(value, type) and issubclass(value, Exception):
        return value
    return None
