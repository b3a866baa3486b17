"""Sessions: one env instance per session, opened, stepped and closed by clients.

A :class:`SessionManager` owns every live env of a server. Calls on one session run one
at a time (a lock per session); sessions run concurrently. Sync envs are adapted with
``as_async`` exactly as the local engine does (blocking envs step in worker threads,
``nonblocking`` ones on the event loop); async envs stay async.

A session that sees no call for ``idle_timeout`` seconds is closed by the reaper, so a
client that dies leaves nothing running; :meth:`SessionManager.close_all` closes every
env on shutdown.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import inspect
import itertools
import logging
import os
import secrets
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import AsyncEnv, Score, as_async, find_attribute
from rolloutgym_protocol.adapters import AsyncFromSync
from rolloutgym_protocol.errors import ConfigError

from ._codec import decode_value, encode_space, encode_value
from ._disclosure import Disclosure
from ._errors import ServerBusy, SessionNotFound
from .catalog import Catalog, ServedEnv

__all__ = ["LOCAL_OWNER", "Metrics", "Session", "SessionManager"]

logger = logging.getLogger("rolloutgym.serve")

# Methods a client may call on a session's env (the protocol methods policies use).
CALLABLE_METHODS = ("oracle_action", "null_action")

# The owner of sessions opened in process (no request, so no credentials): no request's
# owner (a hex digest, see _access.py) can equal it.
LOCAL_OWNER = "local"


async def _maybe_await(value: Any) -> Any:
    if value is None or type(value) in _PLAIN:
        return value
    return await value if inspect.isawaitable(value) else value


_PLAIN = frozenset({tuple, dict, list, str, int, float, bool})


def _score_kind(info: Any) -> dict[str, Any]:
    """Mark an ``info["score"]`` that is a ``Score`` object (the client rebuilds it; a dict stays a dict)."""
    return {"score_object": True} if isinstance(info, dict) and isinstance(info.get("score"), Score) else {}


class Quickness:
    """How long a served env's calls take in worker threads: shared by its sessions (see :class:`QuickCallsInline`)."""

    __slots__ = ("average", "samples", "disabled")

    def __init__(self) -> None:
        self.average = 0.0  # exponentially weighted mean of call durations, seconds
        self.samples = 0
        self.disabled = False

    def add(self, seconds: float) -> None:
        self.average = seconds if not self.samples else 0.8 * self.average + 0.2 * seconds
        self.samples += 1


class QuickCallsInline(AsyncFromSync[Any, Any]):
    """``as_async`` for a served sync env, plus: calls that prove quick run on the event loop.

    A worker-thread hop costs tens of microseconds of CPU and, on a busy machine, a
    scheduler wake-up or two; an in-memory env's step costs less than that. So once
    ``QUICK_SAMPLES`` calls have run in worker threads and the running mean of their
    durations is under ``QUICK_SECONDS``, calls run inline; the first inline call that takes longer than
    ``SLOW_SECONDS`` sends them back to worker threads for good. The measure is shared by
    the sessions of one served env (``quickness``), so short episodes benefit too and one
    slow call ends inlining for that env. Envs marked ``metadata["nonblocking"]`` are
    inline from the start, as everywhere.
    """

    QUICK_SECONDS = 200e-6
    QUICK_SAMPLES = 3
    SLOW_SECONDS = 2e-3

    def __init__(self, env: Any, quickness: Quickness | None = None) -> None:
        super().__init__(env)
        self._quickness = quickness if quickness is not None else Quickness()

    def _quick(self) -> bool:
        quickness = self._quickness
        return (
            not quickness.disabled
            and quickness.samples >= self.QUICK_SAMPLES
            and quickness.average < self.QUICK_SECONDS
        )

    async def _run(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        if self._closed or self._inline:
            return await super()._run(function, *args, **kwargs)
        if self._quick() and self._call_lock.acquire(blocking=False):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self._call_lock.release()
                elapsed = time.perf_counter() - started
                self._quickness.add(elapsed)
                if elapsed > self.SLOW_SECONDS:
                    self._quickness.disabled = True
        timing: list[float] = []
        result = await asyncio.to_thread(self._timed, timing, function, *args, **kwargs)
        if timing:
            self._quickness.add(timing[0])
        return result

    def _timed(self, timing: list[float], function: Any, *args: Any, **kwargs: Any) -> Any:
        # Wall time in the worker thread, waiting for the GIL included: with many sessions
        # busy at once the calls read as slow and stay in threads (measured: at 1,000
        # concurrent sessions inlining cost more server CPU than the thread hops it saved).
        started = time.perf_counter()
        try:
            return self._locked(function, *args, **kwargs)
        finally:
            timing.append(time.perf_counter() - started)

    async def close(self) -> None:
        if not self._closed and self._quick() and self._call_lock.acquire(blocking=False):
            self._closed = True
            try:
                self.env.close()
            finally:
                self._call_lock.release()
            return
        await super().close()


# env id -> (a copy of the tools last encoded, their encoding); the encoding is never mutated.
_TOOLS_CACHE: dict[str, tuple[Any, Any]] = {}


_UNCOPYABLE = object()
_NO_COPY = object()  # _sent(): make the copy


def _length(tools: Any) -> int:
    """How many tools (for tools that cannot be copied: a change in place is noticed by length only)."""
    return len(tools) if isinstance(tools, (list, tuple, dict)) else -1


def _snapshot(tools: Any) -> Any:
    """A copy of ``tools`` as sent, so that an env editing its own list in place is noticed."""
    if tools is None:
        return None
    try:
        return copy.deepcopy(tools)
    except Exception:  # noqa: BLE001 - such tools are compared by identity and length
        return _UNCOPYABLE


@dataclass
class Session:
    """One env instance leased to one client."""

    id: str
    served: ServedEnv
    task_index: int
    task_id: str
    environment: AsyncEnv[Any, Any]
    transport: str = "http"
    asynchronous: bool = False
    owner: str = LOCAL_OWNER
    disclosure: Disclosure = field(default_factory=lambda: Disclosure(False))
    created: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    steps: int = 0
    busy: int = 0
    closed: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # What the client was last sent (``extras()`` sends what differs): the tools object, a copy
    # of its content (shared with the served env's encoding cache when equal) and its length.
    sent_tools: Any = None
    sent_tools_copy: Any = None
    sent_tools_length: int = -1
    sent_spaces: tuple[Any, Any] = (None, None)

    def description(self) -> dict[str, Any]:
        """What a client needs to stand in for the env: spaces, tools, ids, callable methods."""
        environment = self.environment
        tools = find_attribute(environment, "tools")
        metadata = find_attribute(environment, "metadata")
        encoded_tools = self.served_tools(tools)
        cached = _TOOLS_CACHE.get(self.served.env_id)
        self._sent(tools, cached[0] if cached is not None and tools is not None and tools == cached[0] else _NO_COPY)
        return {
            "session": self.id,
            "env_id": self.served.env_id,
            "async": self.asynchronous,
            "task_index": self.task_index,
            "task_id": self.task_id,
            "observation_space": encode_space(environment.observation_space),
            "action_space": encode_space(environment.action_space),
            "tools": encoded_tools,
            "methods": self.disclosure.methods(
                [name for name in CALLABLE_METHODS if find_attribute(environment, name) is not None]
            ),
            "metadata": encode_value(self.disclosure.metadata(metadata)) if isinstance(metadata, dict) else {},
            "env": self.served.info(),
        }

    def served_tools(self, tools: Any) -> Any:
        """``tools`` as JSON; the sessions of a served env share the encoding while their tools are equal."""
        if tools is None:
            return None
        cached = _TOOLS_CACHE.get(self.served.env_id)
        if cached is not None and (tools is cached[0] or (_length(tools) == _length(cached[0]) and tools == cached[0])):
            return cached[1]
        encoded = encode_value(tools)
        try:
            _TOOLS_CACHE[self.served.env_id] = (copy.deepcopy(tools), encoded)
        except Exception:  # noqa: BLE001 - tools that cannot be copied are encoded every time
            _TOOLS_CACHE.pop(self.served.env_id, None)
        return encoded

    def _sent(self, tools: Any, copied: Any = None) -> None:
        self.sent_tools = tools
        self.sent_tools_copy = _snapshot(tools) if copied is _NO_COPY else copied
        self.sent_tools_length = _length(tools)
        self.sent_spaces = (self.environment.observation_space, self.environment.action_space)

    def extras(self) -> dict[str, Any]:
        """Per-call state the LLM loop reads from the env (``next_stop_strings``), and what changed."""
        environment = self.environment
        stop = find_attribute(environment, "next_stop_strings")
        extras = {} if stop is None else {"next_stop_strings": list(stop)}
        tools = find_attribute(environment, "tools")
        observation_space, action_space = environment.observation_space, environment.action_space
        sent = self.sent_tools_copy
        if sent is _UNCOPYABLE:
            changed = _length(tools) != self.sent_tools_length or (
                tools is not self.sent_tools and tools != self.sent_tools
            )
        else:
            changed = tools != sent  # also a list the env edited in place
        if not changed and observation_space is self.sent_spaces[0] and action_space is self.sent_spaces[1]:
            return extras  # the common case: nothing changed, nothing more to send
        if changed:
            extras["tools"] = encode_value(tools) if tools is not None else None
        if observation_space is not self.sent_spaces[0]:
            extras["observation_space"] = encode_space(observation_space)
        if action_space is not self.sent_spaces[1]:
            extras["action_space"] = encode_space(action_space)
        self._sent(tools, _NO_COPY if changed else sent)
        return extras


def _resident_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class Metrics:
    """Counters and a window of step latencies for ``/metrics``."""

    def __init__(self, window: int = 10_000) -> None:
        self.started = time.time()
        self.sessions_created = 0
        self.sessions_closed = 0
        self.sessions_reaped = 0
        self.sessions_rejected = 0
        self.steps = 0
        self.errors = 0
        self.latencies: deque[float] = deque(maxlen=window)
        self.step_times: deque[float] = deque(maxlen=window)

    def record_step(self, seconds: float) -> None:
        self.steps += 1
        self.latencies.append(seconds)
        self.step_times.append(time.monotonic())

    def snapshot(self, open_sessions: int, max_sessions: int) -> dict[str, Any]:
        latencies = sorted(self.latencies)

        def percentile(fraction: float) -> float | None:
            if not latencies:
                return None
            return latencies[min(len(latencies) - 1, int(fraction * len(latencies)))]

        now = time.monotonic()
        recent = [moment for moment in self.step_times if now - moment <= 10.0]
        span = (now - recent[0]) if len(recent) > 1 else 0.0
        return {
            "uptime_seconds": time.time() - self.started,
            "sessions_open": open_sessions,
            "sessions_max": max_sessions,
            "sessions_created_total": self.sessions_created,
            "sessions_closed_total": self.sessions_closed,
            "sessions_reaped_total": self.sessions_reaped,
            "sessions_rejected_total": self.sessions_rejected,
            "steps_total": self.steps,
            "errors_total": self.errors,
            "steps_per_second": (len(recent) / span) if span > 0 else 0.0,
            "python_allocated_blocks": sys.getallocatedblocks(),
            "process_resident_bytes": _resident_bytes(),
            "step_latency_seconds": {
                "p50": percentile(0.5),
                "p90": percentile(0.9),
                "p99": percentile(0.99),
                "count": len(latencies),
            },
        }


class SessionManager:
    """Opens, steps, reaps and closes sessions.

    Results hold the env's own values (observations, ``info``); the transport writes them
    as JSON (``to_jsonable`` for what the json module cannot write).

    Args:
        catalog: the served envs.
        max_sessions: open sessions at most; one more is refused with :class:`ServerBusy` (429).
        idle_timeout: seconds without a call after which a session is closed (``None``: never).
        allow_env_kwargs: let clients pass keyword arguments to env factories (off by
            default: a factory argument can name a file or a host).
        hide_task_data: keep task data on the server (see ``_disclosure.py``): no
            ``oracle_action``, ``info`` reduced to the score's numbers, env error messages withheld.
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        max_sessions: int = 1024,
        idle_timeout: float | None = 300.0,
        allow_env_kwargs: bool = False,
        hide_task_data: bool = False,
    ) -> None:
        self.catalog = catalog
        self.disclosure = Disclosure(hide_task_data)
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.allow_env_kwargs = allow_env_kwargs
        self.sessions: dict[str, Session] = {}
        self.metrics = Metrics()
        self._reserved = 0
        self._counter = itertools.count(1)
        self._reaper: asyncio.Task[None] | None = None
        self._closing = False
        self._quickness: dict[str, Quickness] = {}  # per served env: see QuickCallsInline

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        """Start the idle reaper (call from the server's event loop)."""
        if self.idle_timeout is not None and self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def _reap_forever(self) -> None:
        assert self.idle_timeout is not None
        interval = max(0.05, min(5.0, self.idle_timeout / 4))
        while True:
            await asyncio.sleep(interval)
            await self.reap_idle()

    async def reap_idle(self) -> int:
        """Close sessions idle for longer than ``idle_timeout``; returns how many."""
        if self.idle_timeout is None:
            return 0
        deadline = time.monotonic() - self.idle_timeout
        idle = [session for session in self.sessions.values() if not session.busy and session.last_used < deadline]
        for session in idle:
            await self._close(session, reason="idle")
            self.metrics.sessions_reaped += 1
        if idle:  # give the memory of abandoned envs' reference cycles back now, not at some later full collection
            gc.collect()
        return len(idle)

    async def close_all(self) -> None:
        """Close every session (graceful shutdown); stops the reaper."""
        self._closing = True
        if self._reaper is not None:
            self._reaper.cancel()
            try:
                await self._reaper
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
                pass
            self._reaper = None
        sessions = list(self.sessions.values())
        await asyncio.gather(*(self._close(session, reason="shutdown") for session in sessions), return_exceptions=True)

    # -- calls ------------------------------------------------------------------------

    async def open(
        self,
        env_id: Any,
        *,
        task: Any = None,
        kwargs: dict[str, Any] | None = None,
        transport: str = "http",
        owner: str = LOCAL_OWNER,
    ) -> Session:
        """Create one env instance of a served env's task, owned by ``owner``."""
        if self._closing:
            raise ServerBusy("the server is shutting down; open the session on another server")
        if kwargs and not self.allow_env_kwargs:
            raise PermissionError(
                f"this server does not pass env keyword arguments from clients (got {sorted(kwargs)}); "
                "start it with --allow-env-kwargs, or set them on the server: rolloutgym serve ENV --env-kwargs ..."
            )
        served = self.catalog.get(env_id)
        index, item = served.resolve_task(task)
        if len(self.sessions) + self._reserved >= self.max_sessions:
            self.metrics.sessions_rejected += 1
            raise ServerBusy(
                f"the server holds its maximum of {self.max_sessions} sessions; close sessions you no longer "
                "use, retry later, or start the server with a larger --max-sessions"
            )
        self._reserved += 1
        try:
            created = served.resolved.make(item) if not kwargs else self._make_with(served, item, kwargs)
            environment = await _maybe_await(created)
        except Exception as exc:
            withheld = self.disclosure.env_error(exc)
            if withheld is exc:
                raise
            raise withheld from exc
        finally:
            self._reserved -= 1
        adapted = as_async(environment)
        if type(adapted) is AsyncFromSync:
            quickness = self._quickness.get(served.env_id)
            if quickness is None:
                quickness = self._quickness[served.env_id] = Quickness()
            adapted = QuickCallsInline(environment, quickness)
        asynchronous = adapted is environment
        identifier = served.task_ids()[index]
        for target in {id(environment): environment, id(adapted): adapted}.values():
            try:
                target.rolloutgym_task_id = identifier
                target.rolloutgym_env_id = served.env_id
            except AttributeError:
                pass
        session_id = f"{next(self._counter):x}-{secrets.token_hex(8)}"
        session = Session(
            session_id,
            served,
            index,
            identifier,
            adapted,
            transport,
            asynchronous=asynchronous,
            owner=owner,
            disclosure=self.disclosure,
        )
        self.sessions[session_id] = session
        self.metrics.sessions_created += 1
        logger.info(
            "session opened",
            extra={
                "event": "open",
                "session": session_id,
                "env": served.env_id,
                "task": identifier,
                "transport": transport,
            },
        )
        return session

    def _make_with(self, served: ServedEnv, item: Any, kwargs: dict[str, Any]) -> Any:
        if served.resolved.source != "registry":
            raise ConfigError(f"{served.env_id} comes from an env file; it takes no keyword arguments from clients")
        registry = self.catalog.registry
        return (
            registry.make(served.env_id, task=item, **kwargs)
            if item is not None
            else registry.make(served.env_id, **kwargs)
        )

    def owned_by(self, owner: str) -> list[Session]:
        """The open sessions of ``owner`` (a listing shows no one else's)."""
        return [session for session in self.sessions.values() if session.owner == owner]

    def get(self, session_id: Any, owner: str = LOCAL_OWNER) -> Session:
        """The open session ``session_id`` of ``owner``; anyone else's is not found (404), like an unknown one."""
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None or session.closed or session.owner != owner:
            raise SessionNotFound(
                f"no open session '{session_id}' on this server: it was never opened, was closed, or was "
                f"closed after {self.idle_timeout:g} s without calls; open a new one"
                if self.idle_timeout is not None
                else f"no open session '{session_id}' on this server: it was never opened or was closed; open a new one"
            )
        return session

    async def _call(self, session: Session, function: Any, *args: Any, **kwargs: Any) -> Any:
        session.busy += 1
        try:
            async with session.lock:
                if session.closed:
                    raise SessionNotFound(f"session '{session.id}' was closed while this call waited")
                try:
                    return await _maybe_await(function(*args, **kwargs))
                except Exception as exc:
                    withheld = self.disclosure.env_error(exc)
                    if withheld is exc:
                        raise
                    raise withheld from exc
        finally:
            session.busy -= 1
            session.last_used = time.monotonic()

    async def reset(
        self, session_id: Any, *, seed: Any = None, options: Any = None, prefetch: Any = None, owner: str = LOCAL_OWNER
    ) -> dict[str, Any]:
        session = self.get(session_id, owner)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise TypeError(f"seed must be an integer or null, got {seed!r}")
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a JSON object or null, got {type(options).__name__}")
        observation, info = await self._call(session, session.environment.reset, seed=seed, options=options)
        info = self.disclosure.info(info)
        result = {"observation": observation, "info": info, **_score_kind(info), **session.extras()}
        if prefetch:
            await self._prefetch(session, prefetch, result)
        return result

    async def step(
        self, session_id: Any, action: Any, *, prefetch: Any = None, owner: str = LOCAL_OWNER
    ) -> dict[str, Any]:
        session = self.get(session_id, owner)
        action = decode_value(session.environment.action_space, action)
        started = time.perf_counter()
        result = await self._call(session, session.environment.step, action)
        self.metrics.record_step(time.perf_counter() - started)
        session.steps += 1
        observation, reward, terminated, truncated, info = result
        info = self.disclosure.info(info)
        answer = {
            "observation": observation,
            "reward": float(reward),
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "info": info,
            **_score_kind(info),
            **session.extras(),
        }
        if prefetch and not (terminated or truncated):
            await self._prefetch(session, prefetch, answer)
        return answer

    async def _prefetch(self, session: Session, prefetch: Any, answer: dict[str, Any]) -> None:
        """Add ``oracle_action`` (when asked for) to a reset/step answer: the call the client makes next.

        A failing oracle adds nothing; the client then calls it and gets the error.
        """
        if not isinstance(prefetch, list) or "oracle_action" not in prefetch or self.disclosure.hide:
            return
        function = find_attribute(session.environment, "oracle_action")
        if function is None:
            return
        try:
            answer["oracle_action"] = await self._call(session, function)
        except Exception:  # noqa: BLE001 - reported when the client asks for it
            pass

    async def call(self, session_id: Any, method: Any, *, owner: str = LOCAL_OWNER) -> Any:
        """Call one of the env's protocol methods (``oracle_action``, ``null_action``)."""
        session = self.get(session_id, owner)
        if method not in CALLABLE_METHODS:
            raise ValueError(f"method must be one of {', '.join(CALLABLE_METHODS)}; got {method!r:.100}")
        self.disclosure.may_call(method)
        function = find_attribute(session.environment, method)
        if function is None:
            raise ValueError(f"environment {session.served.env_id} does not define {method}()")
        return await self._call(session, function)

    async def close(self, session_id: Any, owner: str = LOCAL_OWNER) -> bool:
        """Close a session of ``owner``; closing an unknown, closed or someone else's one is a no-op (False)."""
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None or session.owner != owner:
            return False
        await self._close(session, reason="client")
        return True

    async def _close(self, session: Session, *, reason: str) -> None:
        if session.closed:
            return
        session.closed = True
        self.sessions.pop(session.id, None)
        self.metrics.sessions_closed += 1
        try:
            # Wait for a call in flight (a step that is running) before closing under it.
            async with session.lock:
                await _maybe_await(session.environment.close())
        except Exception as exc:  # noqa: BLE001 - a failing close() must not break the server
            logger.warning(
                "env close failed",
                extra={"event": "close_failed", "session": session.id, "error": f"{type(exc).__name__}: {exc}"},
            )
        logger.info(
            "session closed", extra={"event": "close", "session": session.id, "reason": reason, "steps": session.steps}
        )

    def snapshot(self) -> dict[str, Any]:
        return self.metrics.snapshot(len(self.sessions), self.max_sessions)
