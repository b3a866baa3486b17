"""The trusted side of the grading boundary: proxies of the code under test.

Hidden tests run in a trusted process on the host (:mod:`rolloutgym_code._trusted_runner`);
the code under test runs in the sandbox, in a server (:mod:`rolloutgym_code._bridge_server`)
that answers requests on a pipe. This module is the trusted end of that pipe, and the only
thing the two sides share is this wire format: one JSON object per line.

* Importing a module of the code under test gives a :class:`RemoteModule`; its attributes,
  and whatever they return, are plain values built *here* from the JSON (exact ``None``,
  ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``list``, ``tuple``, ``dict``, ``set``,
  ``frozenset``, ``complex``, ``date``/``datetime``/``time``/``timedelta``, ``Decimal``,
  ``Fraction`` and namedtuples made here), or a :class:`RemoteObject` handle for anything
  else (functions, classes, instances, generators). Nothing from the sandbox is unpickled
  or evaluated; an object cannot lie about its type, because its type is chosen here.
* A handle compares equal only to handles (asking the sandbox); against a plain value it
  is unequal, and its truth is an error: an object of the code under test can never stand
  in for an expected value.
* Exceptions raised in the sandbox come back as builtin exception classes (or local
  classes for the code's own exception classes, deriving from the builtin base they
  name); anything else (``SystemExit``, ``KeyboardInterrupt``, pytest outcomes) is a
  :class:`RemoteError`.
* Arguments are sent as data; a trusted ``list``/``dict``/``set``/``bytearray`` is mirrored
  (changes on either side are synchronised after every message, so in-place mutation and
  aliasing bugs stay visible) and a trusted callable becomes a callback the sandbox may
  call. A failed assertion (or pytest outcome) inside a callback is re-raised here when the
  call returns, so the code under test cannot swallow it.
* Every wait has the run's deadline; a line longer than 8 MiB, malformed JSON, an
  unexpected message, an end of the pipe or a time-out ends the session: every later
  request fails.

Only the standard library is used: this file is copied next to the trusted runner.
"""

import builtins
import datetime
import decimal
import fractions
import importlib.abc
import importlib.machinery
import json
import keyword
import operator
import os
import select
import sys
import time
import types

MAX_LINE = 8 << 20
MAX_TOTAL = 256 << 20
MAX_DEPTH = 60


class RemoteError(Exception):
    """The code under test did not answer with plain data, raised something that is not an
    exception, or stopped answering."""


_ISO = {"date": datetime.date, "dt": datetime.datetime, "time": datetime.time}


class BridgeSession:
    """One connection to the sandbox's server (``read_fd`` from it, ``write_fd`` to it)."""

    def __init__(self, read_fd, write_fd, deadline):
        self.read_fd, self.write_fd, self.deadline = read_fd, write_fd, deadline
        self.buffer = bytearray()
        self.total = 0
        self.dead = None
        self.number = 0
        self.callbacks, self.callback_ids = {}, {}
        self.mirrors, self.mirror_ids, self.mirror_sent = {}, {}, {}
        self.exception_classes, self.namedtuples, self.proxies = {}, {}, {}
        self.pending = None

    # -- requests ---------------------------------------------------------------------

    def request(self, op, **fields):
        """Send one request and serve callbacks until its reply; return the decoded result."""
        if self.dead is not None:
            raise RemoteError(self.dead)
        self.number += 1
        number = self.number
        message = {"op": op, "n": number, **fields}
        message["s"] = self._outgoing_sync()
        try:
            self._send(message)
            while True:
                incoming = self._receive()
                self._apply_sync(incoming.get("s"))
                if "re" in incoming:
                    if incoming["re"] != number:
                        raise RemoteError("the code under test answered a request that was not made")
                    break
                self._serve_callback(incoming)
        except BaseException as exc:
            if self.dead is None:
                self.dead = f"the code under test stopped answering ({type(exc).__name__}: {str(exc)[:200]})"
            raise
        pending, self.pending = self.pending, None
        if pending is not None:
            raise pending
        if "e" in incoming:
            raise self._exception(incoming["e"])
        if "r" not in incoming:
            raise RemoteError("the code under test sent a reply without a result")
        return self.decode(incoming["r"])

    def _serve_callback(self, message):
        if message.get("op") != "cb" or type(message.get("n")) is not int:
            raise RemoteError("the code under test sent a message that is not a reply or a callback")
        function = self.callbacks.get(message.get("id"))
        if function is None:
            raise RemoteError("the code under test called a callback it was never given")
        try:
            arguments = [self.decode(item) for item in _list(message.get("a"))]
            keywords = {str(key): self.decode(value) for key, value in _dict(message.get("k")).items()}
            reply = {"re": message["n"], "r": self.encode(function(*arguments, **keywords))}
        except BaseException as exc:
            if isinstance(exc, AssertionError) or not isinstance(exc, Exception):
                self.pending = self.pending or exc  # a failure the code under test must not swallow
            name = type(exc).__name__ if getattr(builtins, type(exc).__name__, None) is type(exc) else "RuntimeError"
            reply = {"re": message["n"], "e": {"b": name, "m": str(exc)[:500]}}
        reply["s"] = self._outgoing_sync()
        self._send(reply)

    # -- transport --------------------------------------------------------------------

    def _remaining(self):
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise RemoteError("the code under test ran past the time limit")
        return remaining

    def _send(self, message):
        data = memoryview((json.dumps(message, ensure_ascii=True) + "\n").encode("ascii"))
        while data:
            _, writable, _ = select.select([], [self.write_fd], [], min(self._remaining(), 1.0))
            if writable:
                data = data[os.write(self.write_fd, data[:65536]) :]

    def _receive(self):
        self._remaining()  # a flood of ready lines must not outlast the deadline either
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_LINE:
                raise RemoteError("the code under test sent a message over 8 MiB")
            readable, _, _ = select.select([self.read_fd], [], [], min(self._remaining(), 1.0))
            if not readable:
                continue
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise RemoteError("the code under test ended (its process exited)")
            self.total += len(chunk)
            if self.total > MAX_TOTAL:
                raise RemoteError("the code under test sent too much data")
            self.buffer += chunk
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        if len(line) > MAX_LINE:
            raise RemoteError("the code under test sent a message over 8 MiB")
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            raise RemoteError("the code under test sent something that is not a message") from None
        if type(message) is not dict:
            raise RemoteError("the code under test sent something that is not a message")
        return message

    # -- values to the sandbox ----------------------------------------------------------

    def encode(self, value, depth=0):
        """``value`` as wire data: plain values, mirrors, handles and callbacks."""
        if depth > MAX_DEPTH:
            raise TypeError("a value nested too deeply to pass to the code under test")
        kind = type(value)
        if value is None or kind in (bool, int, float, str):
            return value
        if kind in (list, dict, set, bytearray):
            return self._mirror(value, depth)
        if kind is tuple:
            return {"$": "t", "v": [self.encode(item, depth + 1) for item in value]}
        if kind is frozenset:
            return {"$": "fs", "v": [self.encode(item, depth + 1) for item in value]}
        if kind is bytes:
            return {"$": "b", "v": value.decode("latin-1")}
        if kind is RemoteObject and value._rg_session is self:
            return {"$": "ref", "id": value._rg_id}
        special = _encode_special(value, kind)
        if special is not None:
            return special
        if isinstance(value, tuple) and isinstance(getattr(kind, "_fields", None), tuple):
            items = [self.encode(item, depth + 1) for item in value]
            return {"$": "nt", "n": kind.__name__, "f": list(kind._fields), "v": items}
        for base in (bool, int, float, str):
            if isinstance(value, base):
                return base(value)
        if callable(value):
            if id(value) not in self.callback_ids:
                self.callback_ids[id(value)] = len(self.callbacks) + 1
                self.callbacks[len(self.callbacks) + 1] = value
            return {"$": "cb", "id": self.callback_ids[id(value)]}
        raise TypeError(
            f"a {kind.__qualname__} cannot be passed to the code under test (only plain data and callables)"
        )

    def _mirror(self, value, depth):
        tid = self.mirror_ids.get(id(value))
        if tid is None or self.mirrors[tid] is not value:
            tid = len(self.mirrors) + 1
            self.mirror_ids[id(value)], self.mirrors[tid] = tid, value
        content = self._content(value, depth)
        self.mirror_sent[tid] = json.dumps(content)
        return {"$": "m", "id": tid, "k": type(value).__name__, "v": content}

    def _content(self, value, depth=0):
        if type(value) is list:
            return [self.encode(item, depth + 1) for item in value]
        if type(value) is dict:
            return [[self.encode(key, depth + 1), self.encode(item, depth + 1)] for key, item in value.items()]
        if type(value) is set:
            return [self.encode(item, depth + 1) for item in value]
        return bytes(value).decode("latin-1")

    def _outgoing_sync(self):
        changed = {}
        for tid, value in self.mirrors.items():
            content = self._content(value)
            text = json.dumps(content)
            if text != self.mirror_sent.get(tid):
                self.mirror_sent[tid] = text
                changed[str(tid)] = content
        return changed

    def _apply_sync(self, sync):
        if sync is None:
            return
        for key, content in _dict(sync).items():
            value = self.mirrors.get(int(key)) if str(key).isdigit() else None
            if value is None:
                raise RemoteError("the code under test changed a value it was never given")
            try:
                if type(value) is list:
                    value[:] = [self.decode(item) for item in _list(content)]
                elif type(value) is dict:
                    pairs = [(self.decode(pair[0]), self.decode(pair[1])) for pair in map(_pair, _list(content))]
                    value.clear()
                    value.update(pairs)
                elif type(value) is set:
                    items = [self.decode(item) for item in _list(content)]
                    value.clear()
                    value.update(items)
                else:
                    value[:] = _str(content).encode("latin-1")
            except (TypeError, ValueError) as exc:
                raise RemoteError(f"the code under test sent a changed value that is not plain data ({exc})") from None
            self.mirror_sent[int(key)] = json.dumps(self._content(value))

    # -- values from the sandbox ----------------------------------------------------------

    def decode(self, data, depth=0):
        """Wire data from the sandbox as a value built here (see the module docstring)."""
        try:
            return self._decode(data, depth)
        except RemoteError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, OverflowError, RecursionError, ArithmeticError) as exc:
            raise RemoteError(f"the code under test answered with something that is not plain data ({exc})") from None

    def _decode(self, data, depth):
        if depth > MAX_DEPTH:
            raise RemoteError("the code under test answered with a value nested too deeply")
        kind = type(data)
        if data is None or kind in (bool, int, float, str):
            return data
        if kind is list:
            return [self._decode(item, depth + 1) for item in data]
        if kind is not dict:
            raise TypeError("unknown wire value")
        tag = data.get("$")
        items = data.get("v")
        if tag == "t":
            return tuple(self._decode(item, depth + 1) for item in _list(items))
        if tag in ("set", "fs"):
            return (set if tag == "set" else frozenset)(self._decode(item, depth + 1) for item in _list(items))
        if tag == "d":
            return {self._decode(k, depth + 1): self._decode(v, depth + 1) for k, v in map(_pair, _list(items))}
        if tag in ("b", "ba"):
            return (bytes if tag == "b" else bytearray)(_str(items).encode("latin-1"))
        if tag == "m":
            value = self.mirrors.get(data.get("id"))
            if value is None:
                raise TypeError("a reference to a value that was never given")
            return value
        if tag == "ref":
            return self._proxy(data)
        if tag == "nt":
            return self._namedtuple(data, depth)
        return _decode_special(tag, items)

    def _namedtuple(self, data, depth):
        name, fields = _str(data.get("n"))[:100], tuple(_str(field)[:100] for field in _list(data.get("f")))
        key = (name, fields)
        if key not in self.namedtuples:
            self.namedtuples[key] = _namedtuple_class(name, fields)
        values = tuple(self._decode(item, depth + 1) for item in _list(data.get("v")))
        if len(values) != len(fields):
            raise TypeError("a namedtuple with the wrong number of values")
        return tuple.__new__(self.namedtuples[key], values)

    def _proxy(self, data):
        rid, kind, name = data.get("id"), data.get("k"), _str(data.get("n", ""))[:200]
        if type(rid) is not int or kind not in ("mod", "cls", "exc", "fn", "obj"):
            raise TypeError("a malformed handle")
        if kind == "exc":
            return self._exception_class(rid, name, data.get("b"), data.get("std"))
        proxy = self.proxies.get(rid)
        if proxy is None:
            proxy = self.proxies[rid] = RemoteObject(self, rid, kind, name, bool(data.get("pkg")))
        return proxy

    def _exception_class(self, rid, name, base_name, standard=None):
        known = _standard_exception(standard)
        if known is not None:
            return known
        if rid not in self.exception_classes:
            base = _builtin_exception(base_name) or Exception
            label = "".join(char for char in name.rsplit(".", 1)[-1] if char.isalnum() or char == "_") or "Error"
            self.exception_classes[rid] = type(label, (base,), {"__module__": "code_under_test"})
        return self.exception_classes[rid]

    def _exception(self, error):
        error = _dict(error)
        message = _str(error.get("m", ""))[:2000]
        if error.get("ref") is not None:
            cls = self._exception_class(error["ref"], _str(error.get("n", "")), error.get("b"), error.get("std"))
        else:
            cls = _builtin_exception(error.get("b"))
        if cls is None:
            return RemoteError(f"the code under test raised {_str(error.get('b', '?'))[:80]}: {message}")
        for candidate in cls.__mro__:
            if isinstance(candidate, type) and issubclass(candidate, Exception):
                try:
                    return candidate(message)
                except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError wants five arguments
                    continue
        return RemoteError(message)


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


# -- proxies ------------------------------------------------------------------------------


def _local_only(name):
    return name.startswith(("__", "_rg_", "_pytest", "_fixture"))


class RemoteObject:
    """A handle on an object of the code under test (see the module docstring)."""

    __slots__ = ("_rg_session", "_rg_id", "_rg_kind", "_rg_name", "_rg_package", "__weakref__")

    def __init__(self, session, rid, kind, name, package=False):
        for attribute, value in zip(self.__slots__[:5], (session, rid, kind, name, package), strict=True):
            object.__setattr__(self, attribute, value)

    def _rg_op(self, name, *arguments):
        session = self._rg_session
        return session.request("op", id=self._rg_id, name=name, a=[session.encode(item) for item in arguments])

    def _rg_same(self, other):
        return type(other) is RemoteObject and other._rg_session is self._rg_session

    def __getattr__(self, name):
        if _local_only(name):
            raise AttributeError(name)
        return self._rg_session.request("get", id=self._rg_id, name=name)

    def __setattr__(self, name, value):
        if _local_only(name):
            raise AttributeError(f"cannot set {name} on an object of the code under test")
        self._rg_session.request("set", id=self._rg_id, name=name, v=self._rg_session.encode(value))

    def __delattr__(self, name):
        if _local_only(name):
            raise AttributeError(name)
        self._rg_session.request("del", id=self._rg_id, name=name)

    def __call__(self, *arguments, **keywords):
        session = self._rg_session
        encoded = [session.encode(item) for item in arguments]
        named = {str(key): session.encode(value) for key, value in keywords.items()}
        return session.request("call", id=self._rg_id, a=encoded, k=named)

    def __repr__(self):
        return f"<{self._rg_kind} {self._rg_name} of the code under test>"

    def __bool__(self):
        raise RemoteError(f"the truth of {self!r} is not plain data (expected e.g. a bool)")

    def __hash__(self):
        return object.__hash__(self)

    def __eq__(self, other):
        return self._rg_op("eq", other) if self._rg_same(other) else NotImplemented

    def __ne__(self, other):
        return self._rg_op("ne", other) if self._rg_same(other) else NotImplemented

    def __lt__(self, other):
        return self._rg_op("lt", other) if self._rg_same(other) else NotImplemented

    def __le__(self, other):
        return self._rg_op("le", other) if self._rg_same(other) else NotImplemented

    def __gt__(self, other):
        return self._rg_op("gt", other) if self._rg_same(other) else NotImplemented

    def __ge__(self, other):
        return self._rg_op("ge", other) if self._rg_same(other) else NotImplemented

    def __str__(self):
        return _typed(self._rg_op("str"), str, "str()")

    def __len__(self):
        return _typed(self._rg_op("len"), int, "len()")

    def __int__(self):
        return _typed(self._rg_op("int"), int, "int()")

    def __index__(self):
        return _typed(self._rg_op("index"), int, "an index")

    def __float__(self):
        return _typed(self._rg_op("float"), float, "float()")

    def __contains__(self, item):
        return _typed(self._rg_op("contains", item), bool, "'in'")

    def __iter__(self):
        result = self._rg_op("iter")
        return result if type(result) is RemoteObject else iter(result)

    def __next__(self):
        return self._rg_op("next")

    def __getitem__(self, key):
        return self._rg_op("getitem", key)

    def __setitem__(self, key, value):
        self._rg_op("setitem", key, value)

    def __delitem__(self, key):
        self._rg_op("delitem", key)

    def __enter__(self):
        return self._rg_op("enter")

    def __exit__(self, *details):
        return _typed(self._rg_op("exit"), (bool, type(None)), "__exit__")

    def __instancecheck__(self, instance):
        return self._rg_same(instance) and _typed(self._rg_op("isinstance", instance), bool, "isinstance()")

    def __subclasscheck__(self, subclass):
        return False


def _arithmetic(name):
    def operation(self, *others):
        return self._rg_op(name, *others)

    operation.__name__ = f"__{name}__"
    return operation


for _name in "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow neg pos abs round".split():
    setattr(RemoteObject, f"__{_name}__", _arithmetic(_name))


def _typed(value, kinds, what):
    if type(value) not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise RemoteError(f"{what} of an object of the code under test gave a {type(value).__name__}, not plain data")
    return value


class RemoteModule(types.ModuleType):
    """A module of the code under test: every attribute is fetched from the sandbox."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        remote = vars(self).get("__rolloutgym_remote__")
        if remote is None:
            raise AttributeError(name)
        return getattr(remote, name)

    def __setattr__(self, name, value):
        if name.startswith("__") or type(value) is RemoteModule:
            vars(self)[name] = value  # the import system's bookkeeping, and submodules, stay here
            return
        setattr(vars(self)["__rolloutgym_remote__"], name, value)

    def __delattr__(self, name):
        if name in vars(self):
            del vars(self)[name]
            return
        delattr(vars(self)["__rolloutgym_remote__"], name)


class _Loader(importlib.abc.Loader):
    def __init__(self, session):
        self.session = session

    def create_module(self, spec):
        return RemoteModule(spec.name)

    def exec_module(self, module):
        remote = self.session.request("import", name=module.__name__)
        if type(remote) is not RemoteObject:
            raise ImportError(f"the code under test answered the import of {module.__name__} with a non-module")
        vars(module)["__rolloutgym_remote__"] = remote
        if remote._rg_package:
            vars(module)["__path__"] = []


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, session, names):
        self.loader, self.names = _Loader(session), frozenset(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, self.loader, origin="the code under test (in the sandbox)")


def install(session, front, back):
    """Make the modules named in ``front`` (before every other finder: the task's own
    modules) and ``back`` (after them: modules only the code under test defines) proxies."""
    sys.meta_path.insert(0, _Finder(session, front))
    sys.meta_path.append(_Finder(session, back))
