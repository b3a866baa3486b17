"""Sessions: one env instance per session, opened, stepped and closed by clients.

A :class:`SessionManager` owns every live env of a server. Calls on one session run one
at a time (a lock per session); sessions run concurrently. Sync envs are adapted with
``as_async`` exactly as the local engine does (blocking envs step in worker threads,
``nonblocking`` ones on the event loop); async envs stay async.

A session that sees no call for ``idle_timeout`` seconds is closed by the reaper, so a
client that dies leaves nothing running; :meth:`SessionManager.close_all` closes every
env on shutdown.

A session itself (what it describes and sends its client) is in ``_session.py``, the
thread-or-inline choice for sync envs' calls in ``_quick_calls.py``, the counters of
``/metrics`` in ``_metrics.py``.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import itertools
import logging
import secrets
import time
import types
from typing import Any

from rolloutgym_protocol import Score, as_async, find_attribute
from rolloutgym_protocol.adapters import AsyncFromSync
from rolloutgym_protocol.errors import ConfigError

from ..registry import adapt_env
from ._disclosure import Disclosure
from ._errors import ServerBusy, SessionNotFound
from ._metrics import Metrics
from ._quick_calls import QuickCallsInline, Quickness
from ._session import CALLABLE_METHODS, LOCAL_OWNER, Session
from .catalog import Catalog, ServedEnv

__all__ = ["SessionManager"]

logger = logging.getLogger("rolloutgym.serve")


async def _maybe_await(value: Any) -> Any:
    if value is None or type(value) in _PLAIN:
        return value
    return await value if inspect.isawaitable(value) else value


_PLAIN = frozenset({tuple, dict, list, str, int, float, bool})
_COROUTINE = types.CoroutineType


def _score_kind(info: Any) -> dict[str, Any]:
    """Mark an ``info["score"]`` that is a ``Score`` object (the client rebuilds it; a dict stays a dict)."""
    return {"score_object": True} if isinstance(info, dict) and isinstance(info.get("score"), Score) else {}


class SessionManager:
    """Opens, steps, reaps and closes sessions.

    Results hold the env's own values (observations, ``info``); the transport writes them
    as JSON (``to_jsonable`` for what the json module cannot write).

    Args:
        catalog: the served envs.
        max_sessions: open sessions at most; one more is refused with :class:`ServerBusy` (429).
        max_sessions_per_owner: open sessions one owner may hold at most (``None``: no limit
            but ``max_sessions``); one more is refused with :class:`ServerBusy` (429).
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
        max_sessions_per_owner: int | None = None,
        idle_timeout: float | None = 300.0,
        allow_env_kwargs: bool = False,
        hide_task_data: bool = False,
    ) -> None:
        self.catalog = catalog
        self.disclosure = Disclosure(hide_task_data)
        self.max_sessions = max_sessions
        self.max_sessions_per_owner = max_sessions_per_owner
        self.held: dict[str, int] = {}  # open and opening sessions per owner (the quota's count)
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
        held = self.held.get(owner, 0)
        if self.max_sessions_per_owner is not None and held >= self.max_sessions_per_owner:
            self.metrics.sessions_rejected += 1
            raise ServerBusy(
                f"these credentials hold their maximum of {self.max_sessions_per_owner} sessions on this server; "
                "close sessions you no longer use, or start the server with a larger --max-sessions-per-owner"
            )
        self._reserved += 1
        self.held[owner] = held + 1
        made = False
        try:
            created = served.resolved.make(item) if not kwargs else self._make_with(served, item, kwargs)
            environment = await _maybe_await(created)
            made = True
        except Exception as exc:
            withheld = self.disclosure.env_error(exc)
            if withheld is exc:
                raise
            raise withheld from exc
        finally:
            self._reserved -= 1
            if not made:
                self._release(owner)
        adapted = adapt_env(environment, lambda built: self._adapter(served, built))  # tagged when built
        asynchronous = adapted is environment
        identifier = served.task_ids()[index]
        session_id = f"{next(self._counter):x}-{secrets.token_hex(16)}"
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

    def _adapter(self, served: ServedEnv, environment: Any) -> Any:
        """``as_async``, with sync envs' calls on the event loop once they prove quick (``_quick_calls.py``)."""
        adapted = as_async(environment)
        if type(adapted) is AsyncFromSync:
            quickness = self._quickness.get(served.env_id)
            if quickness is None:
                quickness = self._quickness[served.env_id] = Quickness()
            adapted = QuickCallsInline(environment, quickness)
        return adapted

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
        lock = session.lock
        try:
            await lock.acquire()  # (not ``async with``: two coroutines fewer on every step)
            try:
                if session.closed:
                    raise SessionNotFound(f"session '{session.id}' was closed while this call waited")
                try:
                    result = function(*args, **kwargs)
                    return await result if type(result) is _COROUTINE else await _maybe_await(result)
                except Exception as exc:  # the env's own error: withheld when the server hides task data
                    withheld = self.disclosure.env_error(exc)
                    if withheld is exc:
                        raise
                    raise withheld from exc
            finally:
                lock.release()
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
        action = session.decode_action(action)
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
        self._release(session.owner)
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

    def _release(self, owner: str) -> None:
        held = self.held.get(owner, 0) - 1
        if held > 0:
            self.held[owner] = held
        else:
            self.held.pop(owner, None)

    def snapshot(self) -> dict[str, Any]:
        return self.metrics.snapshot(len(self.sessions), self.max_sessions)
