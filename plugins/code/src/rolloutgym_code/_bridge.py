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
  in for an expected value. Arithmetic is asked of the sandbox only between handles (and
  must answer with a handle): with a plain operand, or unary, it is an error, so the code
  under test never sees an expected value through ``result - expected`` nor picks the
  number an ``abs(...) < tolerance`` compares.
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

Only the standard library is used: this file, :mod:`rolloutgym_code._bridge_wire` (the
plain values) and :mod:`rolloutgym_code._bridge_proxies` (the handles and the import finder)
are copied next to the trusted runner, as the package ``_rolloutgym_bridge``.
"""

import builtins
import json
import os
import select
import time

from ._bridge_proxies import RemoteObject
from ._bridge_wire import (
    RemoteError,
    _builtin_exception,
    _decode_special,
    _dict,
    _encode_special,
    _list,
    _namedtuple_class,
    _pair,
    _standard_exception,
    _str,
)

MAX_LINE = 8 << 20
MAX_TOTAL = 256 << 20
MAX_DEPTH = 60


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
