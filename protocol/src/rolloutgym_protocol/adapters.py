"""Adapters between the sync (``gymnasium.Env``) and async (:class:`AsyncEnv`) conventions.

Calls on one adapted instance are serialised; concurrency comes from separate instances.
``as_sync(as_async(env)) is env`` and ``as_async(as_sync(env)) is env``.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import gymnasium as gym

from .envs import AsyncEnv, validate_step_result
from .errors import EnvClosedError

__all__ = ["AsyncFromSync", "SyncFromAsync", "as_async", "as_sync"]

T = TypeVar("T")


def _closed(env: Any) -> EnvClosedError:
    return EnvClosedError(f"environment is closed ({type(env).__name__}); create a new one to continue")


ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")


class AsyncFromSync(AsyncEnv[ObsT, ActT]):
    """Run a sync ``gymnasium.Env`` from async code, one worker-thread call at a time.

    Serialisation happens inside the worker thread, so a cancelled caller never lets
    a second call overlap the one still running. An env whose ``metadata`` has
    ``"nonblocking": True`` (its calls are quick, in-memory work) is called directly on
    the event loop instead: a thread hop would cost more than the call.
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        if not isinstance(env, gym.Env):
            raise TypeError(f"expected gymnasium.Env, got {type(env).__name__}")
        self.env = env
        self.action_space = env.action_space
        self.observation_space = env.observation_space
        self.metadata = env.metadata
        self._call_lock = threading.Lock()
        self._closed = False
        self._inline = bool(getattr(env, "metadata", None) and env.metadata.get("nonblocking", False))

    def _locked(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self._call_lock:
            return function(*args, **kwargs)

    async def _run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._closed:
            raise _closed(self)
        if self._inline:
            return function(*args, **kwargs)
        return await asyncio.to_thread(self._locked, function, *args, **kwargs)

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            await AsyncEnv.reset(self, seed=seed)
        return await self._run(self.env.reset, seed=seed, options=options)

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        # The async contract: a float reward and bool flags (a gym env may return an int
        # reward or numpy.bool_ flags); a malformed result is named here, not downstream.
        return validate_step_result(await self._run(self.env.step, action), env=self.env)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._inline:
            self.env.close()
        else:
            await asyncio.to_thread(self._locked, self.env.close)

    @property
    def unwrapped(self) -> Any:
        return self.env.unwrapped

    async def snapshot(self) -> Any:
        """The sync env's ``snapshot()`` (``NotForkable`` if it has none)."""
        from .forking import snapshot

        return await self._run(snapshot, self.env)

    async def restore(self, state: Any) -> None:
        """The sync env's ``restore(state)``."""
        from .forking import restore

        await self._run(restore, self.env, state)

    async def fork(self, n: int = 1) -> list[Any]:
        """``n`` forks of the sync env, each adapted like this one."""
        from .forking import fork

        return [AsyncFromSync(child) for child in await self._run(fork, self.env, n)]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"<AsyncFromSync{self.env!r}>"


def _shut_down(loop: asyncio.AbstractEventLoop, thread: threading.Thread, env: AsyncEnv[Any, Any]) -> None:
    """Close ``env`` on its loop, then stop and close the loop (a dropped, unclosed adapter)."""
    if loop.is_closed():
        return
    if threading.current_thread() is thread:  # dropped inside its own loop: stop it, close later
        loop.create_task(env.close())
        loop.call_soon(loop.stop)
        return
    try:
        asyncio.run_coroutine_threadsafe(env.close(), loop).result(timeout=30)
    except BaseException:  # closing a dropped env is best effort
        pass
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=30)
    if not thread.is_alive():
        loop.close()


class SyncFromAsync(gym.Env[ObsT, ActT]):
    """Run an :class:`AsyncEnv` from sync code on one persistent event loop thread.

    Call :meth:`close` when done; an adapter dropped without it still closes its inner
    env and its event loop when garbage-collected (or at interpreter exit).
    """

    def __init__(self, env: AsyncEnv[Any, Any]) -> None:
        if not isinstance(env, AsyncEnv):
            raise TypeError(f"expected rolloutgym AsyncEnv, got {type(env).__name__}")
        self.env = env
        self.action_space = env.action_space
        self.observation_space = env.observation_space
        self.metadata = env.metadata
        self._call_lock = threading.Lock()
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"SyncFromAsync-{id(self):x}", daemon=True)
        self._thread.start()
        self._finalizer = weakref.finalize(self, _shut_down, self._loop, self._thread, env)

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if self._closed:
            coroutine.close()
            raise _closed(self)
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("SyncFromAsync methods cannot be called from its own event loop thread")
        with self._call_lock:
            future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
            try:
                return future.result()
            except BaseException:
                if not future.done():
                    # an interrupted caller still waits so the env is never used concurrently
                    try:
                        future.result()
                    except BaseException:
                        pass
                raise

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return self._call(self.env.reset(seed=seed, options=options))

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        return self._call(self.env.step(action))

    def _stop_loop(self) -> None:
        self._finalizer.detach()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._call(self.env.close())
        finally:
            self._closed = True
            self._stop_loop()

    def _detach(self) -> AsyncEnv[Any, Any]:
        """Stop the loop without closing the inner env and return it."""
        if not self._closed:
            self._closed = True
            self._stop_loop()
        return self.env

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "env":
            raise AttributeError(name)
        attribute = getattr(self.env, name)
        if callable(attribute) and asyncio.iscoroutinefunction(attribute):
            return lambda *args, **kwargs: self._call(attribute(*args, **kwargs))
        return attribute


def as_async(env: Any) -> AsyncEnv[Any, Any]:
    """Return an :class:`AsyncEnv` view of ``env`` (identity for async envs)."""
    if isinstance(env, SyncFromAsync):
        return env._detach()
    if isinstance(env, AsyncEnv):
        return env
    if isinstance(env, gym.Env):
        return AsyncFromSync(env)
    raise TypeError(f"expected rolloutgym AsyncEnv or gymnasium.Env, got {type(env).__name__}")


def as_sync(env: Any) -> gym.Env[Any, Any]:
    """Return a ``gymnasium.Env`` view of ``env`` (identity for sync envs)."""
    if isinstance(env, AsyncFromSync):
        return env.env
    if isinstance(env, gym.Env):
        return env
    if isinstance(env, AsyncEnv):
        return SyncFromAsync(env)
    raise TypeError(f"expected gymnasium.Env or rolloutgym AsyncEnv, got {type(env).__name__}")
