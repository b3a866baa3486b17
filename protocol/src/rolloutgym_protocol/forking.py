"""Forking an episode: ``snapshot()`` an env mid-episode, ``restore(state)`` it, ``fork(n)`` it.

An env that can fork mixes in :class:`ForkableEnv` (a ``gymnasium.Env``) or
:class:`AsyncForkableEnv` (an :class:`~rolloutgym_protocol.AsyncEnv`) and declares
``EnvSpec(forkable=True)`` so callers can ask before they try::

    env = rg.make("workflow/refund-v2", task=0)
    env.reset(seed=0)
    env.step(action)                      # ... any prefix of the episode
    left, right = env.fork(2)             # two independent envs in the same state
    state = env.snapshot()                # an EnvState: data, not code
    text = state.to_json()                # store it; EnvState.from_json(text) reads it back
    other = rg.make("workflow/refund-v2", task=0)
    other.restore(state)                  # continues exactly where env was

The functions :func:`fork`, :func:`snapshot`, :func:`restore` (and the awaitable :func:`afork`,
:func:`asnapshot`, :func:`arestore`) accept wrapped and adapted envs too: they reach the
forkable env inside and wrap each fork again. A wrapper is copied shallowly, so a wrapper
that keeps its own mutable episode state must implement ``fork`` itself.

An env implements three hooks: ``_snapshot_state() -> dict`` (JSON values; a top-level value
may be ``bytes``, kept as a blob), ``_restore_state(data)`` (replace every piece of episode
state from ``data``) and, when a shallow copy would share something mutable (a database
connection, a process), ``_fork_blank()`` (a new env of the same kind and task, not yet reset).
The env's random generator is saved and restored by the mixin.

A state is JSON text plus named byte blobs: :meth:`EnvState.from_json` parses JSON only
(never pickle, never code), checks the shape, and ``restore`` checks the env class, env id,
state version and task before the env reads it; every mismatch is one :class:`StateError` line.
"""

from __future__ import annotations

import base64
import binascii
import copy
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .errors import NotForkable, StateError

__all__ = [
    "STATE_FORMAT",
    "AsyncForkableEnv",
    "EnvState",
    "ForkableEnv",
    "afork",
    "arestore",
    "asnapshot",
    "aspawn",
    "can_fork",
    "fork",
    "restore",
    "snapshot",
]

STATE_FORMAT = "rolloutgym/env-state"
_FORMAT_VERSION = 1
_RNG_KEY = "__np_random__"
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


@dataclass(frozen=True)
class EnvState:
    """One env's state mid-episode: which env it belongs to, and its data as JSON text plus byte blobs.

    Attributes:
        kind: the env's class, ``"module:QualName"``.
        version: the class's ``state_version`` when the state was taken.
        env_id: the registered env id (``"workflow/refund-v2"``), when the env was made by id.
        task: the task id the episode runs, when it has one.
        payload: the env's data as JSON text (read it with :attr:`data`, a fresh copy each time).
        blobs: named byte strings (a database file, a workspace archive).
    """

    kind: str
    version: int
    env_id: str | None
    task: str | None
    payload: str
    blobs: Mapping[str, bytes] = field(default_factory=dict)

    @property
    def data(self) -> Any:
        """The env's data: a new copy on every read, so restored envs never share it."""
        return json.loads(self.payload)

    @property
    def nbytes(self) -> int:
        """The size of the state's payload and blobs in bytes."""
        return len(self.payload) + sum(len(blob) for blob in self.blobs.values())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (blobs in base64)."""
        return {
            "format": STATE_FORMAT,
            "format_version": _FORMAT_VERSION,
            "kind": self.kind,
            "version": self.version,
            "env_id": self.env_id,
            "task": self.task,
            "data": self.data,
            "blobs": {name: base64.b64encode(blob).decode("ascii") for name, blob in self.blobs.items()},
        }

    def to_json(self) -> str:
        """The state as one JSON document (what :meth:`from_json` reads)."""
        return json.dumps(self.to_dict(), separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> EnvState:
        """Check and read a dict made by :meth:`to_dict`; :class:`StateError` names what is wrong."""
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise StateError(f"not an env state: expected a JSON object with format {STATE_FORMAT!r}")
        if data.get("format_version") != _FORMAT_VERSION:
            raise StateError(
                f"env state format_version {data.get('format_version')!r} is not {_FORMAT_VERSION}: "
                "take the snapshot again with this rolloutgym"
            )
        kind, version, blobs = data.get("kind"), data.get("version"), data.get("blobs", {})
        if not isinstance(kind, str) or ":" not in kind:
            raise StateError("env state: 'kind' must be the env class as 'module:Class'")
        if isinstance(version, bool) or not isinstance(version, int):
            raise StateError("env state: 'version' must be an integer")
        for name in ("env_id", "task"):
            if data.get(name) is not None and not isinstance(data.get(name), str):
                raise StateError(f"env state: {name!r} must be a string or null")
        if not isinstance(blobs, dict) or not all(isinstance(value, str) for value in blobs.values()):
            raise StateError("env state: 'blobs' must map names to base64 text")
        try:
            decoded = {str(name): base64.b64decode(value, validate=True) for name, value in blobs.items()}
        except (binascii.Error, ValueError) as exc:
            raise StateError(f"env state: a blob is not valid base64 ({exc})") from None
        payload = _json_text(data.get("data"), kind)
        return cls(kind, version, data.get("env_id"), data.get("task"), payload, decoded)

    @classmethod
    def from_json(cls, text: str | bytes) -> EnvState:
        """Read :meth:`to_json`'s output. Only JSON is parsed: nothing is executed or unpickled."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split("\n")[0]
            raise StateError(f"not an env state: the text is not JSON ({reason})") from None
        return cls.from_dict(data)


def _json_text(data: Any, kind: str) -> str:
    try:
        return json.dumps(data, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise StateError(f"{kind}: its state is not JSON data ({str(exc)[:200]})") from None


def _kind_of(env: Any) -> str:
    cls = type(env)
    return f"{cls.__module__}:{cls.__qualname__}"


def _task_of(env: Any) -> str | None:
    tagged = getattr(env, "rolloutgym_task_id", None)
    if tagged is not None:
        return str(tagged)
    task = getattr(env, "task", None)
    identifier = task.get("id") if isinstance(task, Mapping) else getattr(task, "id", None)
    return None if identifier is None else str(identifier)


def _make_state(env: Any, data: Any) -> EnvState:
    if not isinstance(data, dict):
        raise StateError(f"{_kind_of(env)}._snapshot_state() returned {type(data).__name__}, expected a dict")
    blobs = {name: bytes(value) for name, value in data.items() if isinstance(value, (bytes, bytearray))}
    plain = {name: value for name, value in data.items() if name not in blobs}
    generator = getattr(env, "_np_random", None)
    if isinstance(generator, np.random.Generator):
        plain[_RNG_KEY] = generator.bit_generator.state
    kind = _kind_of(env)
    return EnvState(
        kind, env.state_version, getattr(env, "rolloutgym_env_id", None), _task_of(env), _json_text(plain, kind), blobs
    )


def _check_state(env: Any, state: Any) -> dict[str, Any]:
    """The data ``env`` may restore from ``state``, or the :class:`StateError` saying why not."""
    kind = _kind_of(env)
    if not isinstance(state, EnvState):
        raise StateError(
            f"restore() takes an EnvState (from snapshot() or EnvState.from_json()), got {type(state).__name__}"
        )
    if state.kind != kind:
        raise StateError(f"this state belongs to {state.kind}, not {kind}: restore it into the env it came from")
    env_id = getattr(env, "rolloutgym_env_id", None)
    if state.env_id and env_id and state.env_id != env_id:
        raise StateError(f"this state belongs to env {state.env_id}, not {env_id}: make {state.env_id} to restore it")
    if state.version != env.state_version:
        raise StateError(
            f"this state is version {state.version} of {kind}, which now reads version {env.state_version}: "
            "take the snapshot again with this version"
        )
    task = _task_of(env)
    if state.task is not None and task is not None and state.task != task:
        raise StateError(
            f"this state is for task {state.task!r}, this env runs task {task!r}: make the env for that task"
        )
    data = state.data
    if not isinstance(data, dict):
        raise StateError(f"{kind}: the state's data is {type(data).__name__}, expected an object")
    data.update(state.blobs)
    return data


def _restore_generator(env: Any, data: dict[str, Any]) -> None:
    saved = data.pop(_RNG_KEY, None)
    if saved is None:
        return
    try:
        kind = saved["bit_generator"]
        if kind not in _BIT_GENERATORS:
            raise ValueError(f"unknown bit generator {str(kind)[:40]!r}")
        bit_generator = getattr(np.random, kind)(0)  # seeded: no OS entropy read; the state replaces it
        bit_generator.state = saved
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StateError(f"{_kind_of(env)}: the state's random generator is malformed ({exc})") from None
    env._np_random = np.random.Generator(bit_generator)


def _restore_failed(env: Any, exc: Exception) -> StateError:
    return StateError(f"{_kind_of(env)} could not restore this state (corrupt or edited): {str(exc)[:200]}")


def _tagged_like(child: Any, parent: Any) -> Any:
    """``child`` with ``parent``'s env id and task id tags (set by the registry on made envs)."""
    for name in ("rolloutgym_task_id", "rolloutgym_env_id"):
        value = getattr(parent, name, None)
        if value is not None and getattr(child, name, None) is None:
            try:
                setattr(child, name, value)
            except AttributeError:
                pass
    return child


def _check_count(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"fork(n) takes a positive integer n, got {n!r}")
    return n


class ForkableEnv:
    """Mix into a ``gymnasium.Env`` that can copy its episode: ``snapshot``, ``restore``, ``fork``.

    ``forkable`` may be overridden (a property) by an env whose instances fork only in some
    configurations; ``fork_note`` then says why one cannot.
    """

    state_version: ClassVar[int] = 1
    forkable: bool = True

    def _snapshot_state(self) -> dict[str, Any]:
        raise NotImplementedError

    def _restore_state(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    def _fork_blank(self) -> Any:
        return copy.copy(self)

    def snapshot(self) -> EnvState:
        """The episode's state now (JSON data and blobs; safe to store)."""
        if not self.forkable:
            raise _not_forkable(self)
        return _make_state(self, self._snapshot_state())

    def restore(self, state: EnvState) -> None:
        """Put this env in ``state`` (taken from an env of the same class, env id and task)."""
        if not self.forkable:
            raise _not_forkable(self)
        data = _check_state(self, state)
        _restore_generator(self, data)
        try:
            self._restore_state(data)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise _restore_failed(self, exc) from None

    def fork(self, n: int = 1) -> list[Any]:
        """``n`` new envs in this env's state, independent of it and of each other."""
        return self.spawn(self.snapshot(), n)

    def spawn(self, state: EnvState, n: int = 1) -> list[Any]:
        """``n`` new envs of this env's kind in ``state`` (e.g. a snapshot taken earlier in the episode)."""
        children = []
        for _ in range(_check_count(n)):
            child = _tagged_like(self._fork_blank(), self)
            child.restore(state)
            children.append(child)
        return children


class AsyncForkableEnv:
    """Mix into an ``AsyncEnv`` that can copy its episode; the hooks may be coroutines (see :class:`ForkableEnv`)."""

    state_version: ClassVar[int] = 1
    forkable: bool = True

    async def _snapshot_state(self) -> dict[str, Any]:
        raise NotImplementedError

    async def _restore_state(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    async def _fork_blank(self) -> Any:
        return copy.copy(self)

    async def snapshot(self) -> EnvState:
        """The episode's state now (JSON data and blobs; safe to store)."""
        if not self.forkable:
            raise _not_forkable(self)
        return _make_state(self, await self._snapshot_state())

    async def restore(self, state: EnvState) -> None:
        """Put this env in ``state`` (taken from an env of the same class, env id and task)."""
        if not self.forkable:
            raise _not_forkable(self)
        data = _check_state(self, state)
        _restore_generator(self, data)
        try:
            await self._restore_state(data)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise _restore_failed(self, exc) from None

    async def fork(self, n: int = 1) -> list[Any]:
        """``n`` new envs in this env's state, independent of it and of each other."""
        return await self.spawn(await self.snapshot(), n)

    async def spawn(self, state: EnvState, n: int = 1) -> list[Any]:
        """``n`` new envs of this env's kind in ``state`` (e.g. a snapshot taken earlier in the episode)."""
        children = []
        for _ in range(_check_count(n)):
            child = _tagged_like(await self._fork_blank(), self)
            await child.restore(state)
            children.append(child)
        return children


# -- the functions: reach the forkable env through wrappers and adapters ---------------


def _inner(env: Any) -> Any:
    return env.__dict__.get("env") if hasattr(env, "__dict__") else None


def _forkable_layer(env: Any) -> Any:
    seen: set[int] = set()
    current = env
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ForkableEnv, AsyncForkableEnv)):
            return current if current.forkable else None
        current = _inner(current)
    return None


def _not_forkable(env: Any) -> NotForkable:
    reason = getattr(_unwrapped(env), "fork_note", None) or (
        "it does not implement snapshot/restore (rolloutgym_protocol.ForkableEnv or AsyncForkableEnv)"
    )
    return NotForkable(f"{type(_unwrapped(env)).__name__} cannot fork: {reason}")


def _unwrapped(env: Any) -> Any:
    inner = _inner(env)
    return env if inner is None else _unwrapped(inner)


def can_fork(env: Any) -> bool:
    """Whether ``env`` (or the env it wraps) implements snapshot, restore and fork."""
    return _forkable_layer(env) is not None


def _rewrap(wrapper: Any, child: Any) -> Any:
    from .adapters import AsyncFromSync, SyncFromAsync

    if isinstance(wrapper, (AsyncFromSync, SyncFromAsync)):
        clone = type(wrapper)(child)
    else:
        clone = copy.copy(wrapper)
        clone.__dict__["env"] = child
    for name in ("rolloutgym_task_id", "rolloutgym_env_id"):
        if name in wrapper.__dict__:
            clone.__dict__[name] = wrapper.__dict__[name]
    return clone


def snapshot(env: Any) -> EnvState:
    """``snapshot()`` of the forkable env ``env`` is or wraps (sync; a sync adapter runs an async one)."""
    layer = _forkable_layer(env)
    if layer is None:
        raise _not_forkable(env)
    if isinstance(layer, AsyncForkableEnv):
        return _run_sync(env, layer.snapshot())
    return layer.snapshot()


def restore(env: Any, state: EnvState) -> None:
    """``restore(state)`` on the forkable env ``env`` is or wraps."""
    layer = _forkable_layer(env)
    if layer is None:
        raise _not_forkable(env)
    if isinstance(layer, AsyncForkableEnv):
        _run_sync(env, layer.restore(state))
    else:
        layer.restore(state)


def fork(env: Any, n: int = 1) -> list[Any]:
    """``n`` independent copies of ``env`` mid-episode, wrapped as ``env`` is."""
    if env is _forkable_layer(env):
        return _run_sync(env, env.fork(n)) if isinstance(env, AsyncForkableEnv) else env.fork(n)
    inner = _inner(env)
    if inner is None or _forkable_layer(env) is None:
        raise _not_forkable(env)
    if type(env).__name__ == "SyncFromAsync":
        return [_rewrap(env, child) for child in env._call(afork(inner, n))]
    return [_rewrap(env, child) for child in fork(inner, n)]


def _run_sync(env: Any, coroutine: Any) -> Any:
    """Run an async env's coroutine from sync code: through a ``SyncFromAsync`` layer when there is one."""
    current = env
    while current is not None:
        if type(current).__name__ == "SyncFromAsync":
            return current._call(coroutine)
        current = _inner(current)
    coroutine.close()
    raise NotForkable(f"{type(env).__name__} is async: use afork/asnapshot/arestore (await them)")


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def asnapshot(env: Any) -> EnvState:
    """The awaitable :func:`snapshot` (a sync env's snapshot runs inline: it is in-memory work)."""
    layer = _forkable_layer(env)
    if layer is None:
        raise _not_forkable(env)
    return await _maybe_await(layer.snapshot())


async def arestore(env: Any, state: EnvState) -> None:
    """The awaitable :func:`restore`."""
    layer = _forkable_layer(env)
    if layer is None:
        raise _not_forkable(env)
    await _maybe_await(layer.restore(state))


async def aspawn(env: Any, state: EnvState, n: int = 1) -> list[Any]:
    """``n`` new envs like ``env`` (wrapped and adapted as it is) in ``state``, a snapshot taken from it earlier.

    The engine's branching rollouts snapshot the trunk before each branch step and spawn the
    branches later, so no env is held open per branch step.
    """
    layer = _forkable_layer(env)
    if layer is None:
        raise _not_forkable(env)
    if env is layer:
        return await _maybe_await(env.spawn(state, n))
    return [_rewrap(env, child) for child in await aspawn(_inner(env), state, n)]


async def afork(env: Any, n: int = 1) -> list[Any]:
    """The awaitable :func:`fork`: ``n`` independent copies of ``env``, wrapped and adapted as ``env`` is."""
    if env is _forkable_layer(env):
        return await _maybe_await(env.fork(n))
    inner = _inner(env)
    if inner is None or _forkable_layer(env) is None:
        raise _not_forkable(env)
    return [_rewrap(env, child) for child in await afork(inner, n)]
