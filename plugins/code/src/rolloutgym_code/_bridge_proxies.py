"""The proxies of the code under test on the trusted side of the grading boundary.

A :class:`RemoteObject` is a handle on an object in the sandbox and a :class:`RemoteModule`
one of its modules; :func:`install` puts the import finders that make them on
``sys.meta_path``. What a handle may and may not do is in :mod:`rolloutgym_code._bridge`'s
docstring; every operation is a request of the session (:class:`~rolloutgym_code._bridge.BridgeSession`)
that made the handle.

Only the standard library is used: this file is copied next to the trusted runner.
"""

import importlib.abc
import importlib.machinery
import sys
import types

from ._bridge_wire import RemoteError


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
    """An arithmetic operator of a handle: asked of the sandbox only when every operand is a
    handle of the same session, and only a handle is accepted back. Arithmetic with a plain
    value would hand the test's expected value to the code under test, whose answer (say
    ``0.0`` to ``result - expected``) would then stand as the test's own computation; a unary
    operator, or a plain answer, would let the object pick the number a test compares."""

    def operation(self, *others):
        if not others or not all(self._rg_same(other) for other in others):
            raise RemoteError(
                f"{self!r} takes no part in arithmetic on the trusted side (__{name}__): "
                "the code under test must return plain values (numbers, strings, lists, ...)"
            )
        return _typed(self._rg_op(name, *others), RemoteObject, f"__{name}__")

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
