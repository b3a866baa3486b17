"""The sandbox side of the grading boundary (its source is run with ``python -I -B -c``).

It imports the code under test and answers the trusted runner's requests (import, get,
set, call, operators) on its stdin/stdout, in the wire format of
:mod:`rolloutgym_code._bridge`. It holds no secret and decides nothing: the code under test
may replace any part of it, and the worst it can do is answer with different data, which
the trusted side parses and compares itself. Its own stdout and stderr go to
``/dev/null`` (the channel is a private copy of the original descriptors), so ``print``
in the code under test cannot break the protocol by accident.
"""

import builtins
import collections
import datetime
import decimal
import fractions
import importlib
import json
import operator
import os
import sys
import types

_OPERATORS = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
    "ge": operator.ge, "str": str, "len": len, "int": int, "index": operator.index, "float": float,
    "contains": lambda container, item: item in container, "iter": iter, "next": next,
    "getitem": operator.getitem, "setitem": operator.setitem, "delitem": operator.delitem,
    "enter": lambda value: type(value).__enter__(value),
    "exit": lambda value: type(value).__exit__(value, None, None, None),
    "isinstance": lambda cls, value: isinstance(value, cls), "add": operator.add,
    "radd": lambda a, b: b + a, "sub": operator.sub, "rsub": lambda a, b: b - a, "mul": operator.mul,
    "rmul": lambda a, b: b * a, "truediv": operator.truediv, "rtruediv": lambda a, b: b / a,
    "floordiv": operator.floordiv, "rfloordiv": lambda a, b: b // a, "mod": operator.mod, "rmod": lambda a, b: b % a,
    "pow": pow, "neg": operator.neg, "pos": operator.pos, "abs": abs, "round": round,
}  # fmt: skip


class Server:
    def __init__(self, read_fd, write_fd):
        self.read_fd, self.write_fd = read_fd, write_fd
        self.buffer = b""
        self.objects, self.object_ids = {}, {}
        self.mirrors, self.mirror_ids, self.mirror_sent = {}, {}, {}
        self.stubs, self.namedtuples = {}, {}
        self.number = 0

    def send(self, message):
        data = memoryview((json.dumps(message, ensure_ascii=True) + "\n").encode("ascii"))
        while data:
            data = data[os.write(self.write_fd, data) :]

    def receive(self):
        while b"\n" not in self.buffer:
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                os._exit(0)
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def serve(self):
        while True:
            self.handle(self.receive())

    def handle(self, message):
        self.apply_sync(message.get("s"))
        reply = {"re": message.get("n")}
        try:
            reply["r"] = self.encode(self.perform(message))
        except BaseException as exc:  # noqa: BLE001 - everything the code under test raises is an answer
            reply["e"] = self.describe_error(exc)
        reply["s"] = self.sync()
        self.send(reply)

    def perform(self, message):
        op = message["op"]
        if op == "import":
            return importlib.import_module(message["name"])
        target = self.objects[message["id"]]
        if op == "get":
            return getattr(target, message["name"])
        if op == "set":
            return setattr(target, message["name"], self.decode(message["v"]))
        if op == "del":
            return delattr(target, message["name"])
        if op == "call":
            arguments = [self.decode(item) for item in message["a"]]
            return target(*arguments, **{key: self.decode(value) for key, value in message["k"].items()})
        if op == "op":
            return _OPERATORS[message["name"]](target, *[self.decode(item) for item in message["a"]])
        raise ValueError(f"unknown request {op!r}")

    def callback(self, cid, arguments, keywords):
        self.number += 1
        number = -self.number
        encoded = [self.encode(item) for item in arguments]
        named = {key: self.encode(value) for key, value in keywords.items()}
        self.send({"op": "cb", "n": number, "id": cid, "a": encoded, "k": named, "s": self.sync()})
        while True:
            message = self.receive()
            if "re" not in message:
                self.handle(message)
                continue
            self.apply_sync(message.get("s"))
            if "e" in message:
                error = message["e"]
                cls = vars(builtins).get(error.get("b", ""))
                cls = cls if isinstance(cls, type) and issubclass(cls, Exception) else RuntimeError
                raise cls(error.get("m", ""))
            return self.decode(message.get("r"))

    # -- values -----------------------------------------------------------------------------

    def reference(self, value):
        rid = self.object_ids.get(id(value))
        if rid is None or self.objects[rid] is not value:
            rid = len(self.objects) + 1
            self.objects[rid], self.object_ids[id(value)] = value, rid
        return rid

    def describe(self, value):
        name = getattr(value, "__qualname__", None) or type(value).__qualname__
        handle = {"$": "ref", "id": self.reference(value), "n": str(name)[:200]}
        if isinstance(value, types.ModuleType):
            handle.update(k="mod", pkg=hasattr(value, "__path__"))
        elif isinstance(value, type) and issubclass(value, BaseException):
            handle.update(k="exc", b=_builtin_base(value), std=_standard(value))
        elif isinstance(value, type):
            handle["k"] = "cls"
        else:
            handle["k"] = "fn" if callable(value) else "obj"
        return handle

    def describe_error(self, exc):
        try:
            message = str(exc)[:2000]
        except BaseException:  # noqa: BLE001
            message = ""
        cls = type(exc)
        if cls.__module__ == "builtins":
            return {"ref": None, "b": cls.__name__, "m": message}
        return {
            "ref": self.reference(cls),
            "n": cls.__qualname__,
            "b": _builtin_base(cls),
            "std": _standard(cls),
            "m": message,
        }

    def encode(self, value, depth=0):
        if depth > 60:
            raise ValueError("a value nested too deeply to send")
        tid = self.mirror_ids.get(id(value))
        if tid is not None and self.mirrors[tid] is value:
            return {"$": "m", "id": tid}
        if value is None or isinstance(value, bool):
            return value if value is None else bool(value)
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, (bytes, bytearray)):
            return {"$": "b" if isinstance(value, bytes) else "ba", "v": bytes(value).decode("latin-1")}
        if isinstance(value, tuple):
            items = [self.encode(item, depth + 1) for item in value]
            fields = getattr(type(value), "_fields", None)
            if isinstance(fields, tuple) and all(isinstance(field, str) for field in fields):
                return {"$": "nt", "n": type(value).__name__, "f": list(fields), "v": items}
            return {"$": "t", "v": items}
        if isinstance(value, list):
            return [self.encode(item, depth + 1) for item in value]
        if isinstance(value, dict):
            return {"$": "d", "v": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in value.items()]}
        if isinstance(value, (set, frozenset)):
            return {
                "$": "set" if isinstance(value, set) else "fs",
                "v": [self.encode(item, depth + 1) for item in value],
            }
        special = _encode_special(value)
        return special if special is not None else self.describe(value)

    def content(self, value):
        if isinstance(value, list):
            return [self.encode(item) for item in value]
        if isinstance(value, dict):
            return [[self.encode(key), self.encode(item)] for key, item in value.items()]
        if isinstance(value, set):
            return [self.encode(item) for item in value]
        return bytes(value).decode("latin-1")

    def sync(self):
        changed = {}
        for tid, value in self.mirrors.items():
            content = self.content(value)
            text = json.dumps(content)
            if text != self.mirror_sent.get(tid):
                self.mirror_sent[tid] = text
                changed[str(tid)] = content
        return changed

    def apply_sync(self, sync):
        for key, content in (sync or {}).items():
            if int(key) in self.mirrors:
                self.fill(self.mirrors[int(key)], content)

    def fill(self, value, content):
        if isinstance(value, list):
            value[:] = [self.decode(item) for item in content]
        elif isinstance(value, dict):
            pairs = [(self.decode(key), self.decode(item)) for key, item in content]
            value.clear()
            value.update(pairs)
        elif isinstance(value, set):
            items = [self.decode(item) for item in content]
            value.clear()
            value.update(items)
        else:
            value[:] = content.encode("latin-1")
        self.mirror_sent[self.mirror_ids[id(value)]] = json.dumps(self.content(value))

    def decode(self, data):
        if not isinstance(data, (dict, list)):
            return data
        if isinstance(data, list):
            return [self.decode(item) for item in data]
        tag, items = data.get("$"), data.get("v")
        if tag == "m":
            tid = data["id"]
            if tid not in self.mirrors:
                value = {"list": list, "dict": dict, "set": set, "bytearray": bytearray}[data["k"]]()
                self.mirrors[tid], self.mirror_ids[id(value)] = value, tid
            self.fill(self.mirrors[tid], items)
            return self.mirrors[tid]
        if tag == "cb":
            if data["id"] not in self.stubs:
                self.stubs[data["id"]] = _stub(self, data["id"])
            return self.stubs[data["id"]]
        if tag == "ref":
            return self.objects[data["id"]]
        if tag == "t":
            return tuple(self.decode(item) for item in items)
        if tag == "fs":
            return frozenset(self.decode(item) for item in items)
        if tag == "b":
            return items.encode("latin-1")
        if tag == "nt":
            key = (data["n"], tuple(data["f"]))
            if key not in self.namedtuples:
                self.namedtuples[key] = collections.namedtuple(*key)
            return self.namedtuples[key](*[self.decode(item) for item in items])
        return _decode_special(tag, items)


def _stub(server, cid):
    def callback(*arguments, **keywords):
        return server.callback(cid, arguments, keywords)

    return callback


def _builtin_base(cls):
    for klass in cls.__mro__:
        if klass.__module__ == "builtins":
            return klass.__name__
    return "Exception"


def _standard(cls):
    module = str(getattr(cls, "__module__", ""))
    if module.split(".")[0] in sys.stdlib_module_names:
        return [module, cls.__qualname__]
    return None


def _encode_special(value):
    if isinstance(value, complex):
        return {"$": "c", "v": [value.real, value.imag]}
    for kind, tag in ((datetime.datetime, "dt"), (datetime.date, "date"), (datetime.time, "time")):
        if isinstance(value, kind):
            return {"$": tag, "v": kind.isoformat(value)}
    if isinstance(value, datetime.timedelta):
        return {"$": "td", "v": [value.days, value.seconds, value.microseconds]}
    if isinstance(value, decimal.Decimal):
        return {"$": "dec", "v": str(value)}
    if isinstance(value, fractions.Fraction):
        return {"$": "frac", "v": [value.numerator, value.denominator]}
    return None


def _decode_special(tag, items):
    if tag == "c":
        return complex(*items)
    if tag in ("date", "dt", "time"):
        return {"date": datetime.date, "dt": datetime.datetime, "time": datetime.time}[tag].fromisoformat(items)
    if tag == "td":
        return datetime.timedelta(*items)
    if tag == "dec":
        return decimal.Decimal(items)
    if tag == "frac":
        return fractions.Fraction(*items)
    raise ValueError(f"unknown wire tag {tag!r}")


def main():
    read_fd, write_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(null, descriptor)
    os.close(null)
    workspace = os.getcwd()
    sys.path[:0] = [workspace, os.path.join(workspace, "src")]
    sys.argv = ["solution"]
    Server(read_fd, write_fd).serve()


main()
