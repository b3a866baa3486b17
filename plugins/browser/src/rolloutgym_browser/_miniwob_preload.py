"""MiniWoB++ task pages opened ahead: the file server of each html folder, and for the most
recently started tasks a pooled context with the page already loaded (not yet started)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ._browser_pool import release_result
from ._miniwob_sanitize import SANITIZE_JS
from ._miniwob_server import StaticServer

__all__ = ["open_task_page", "prepare_next", "server_for", "take_ready"]


# Process-wide, on the service loop: one file server per html folder (pages of every
# environment share it), and, for the most recently started task pages, a pooled context
# with that page already loaded but not started: the next episode of the same task only
# seeds and starts it. Loading a page does not draw from Math.random before the seed is set.
# Both are kept per event loop: a restarted browser service (shutdown_browser) starts afresh.
_SERVERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, StaticServer]] = weakref.WeakKeyDictionary()
_READY: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, OrderedDict[tuple[str, str], asyncio.Future[tuple[Any, Any, list[str]]]]
] = weakref.WeakKeyDictionary()
_READY_LIMIT = 4


def _ready() -> OrderedDict[tuple[str, str], asyncio.Future[tuple[Any, Any, list[str]]]]:
    return _READY.setdefault(asyncio.get_running_loop(), OrderedDict())


async def server_for(root: Path) -> StaticServer:
    servers = _SERVERS.setdefault(asyncio.get_running_loop(), {})
    server = servers.get(root)
    if server is None:
        server = StaticServer(root)
        await server.start()
        servers[root] = server
    return server


async def open_task_page(pool: Any, origin: str, task_file: str) -> tuple[Any, Any, list[str]]:
    """A fresh pooled context showing ``task_file`` (episode not started); only ``origin`` is reachable."""
    acquiring = pool.start_acquire()
    try:
        context, page = await asyncio.shield(acquiring)
    except asyncio.CancelledError:
        acquiring.add_done_callback(lambda done: release_result(pool, done))
        raise
    blocked: list[str] = []

    async def block(route: Any) -> None:
        blocked.append(route.request.url)
        with contextlib.suppress(Exception):
            await route.abort("blockedbyclient")

    try:
        # The package's own files load; nothing else does (not the network, not local files).
        await context.route(re.compile(rf"^(?!{re.escape(origin)}/)"), block)
        await page.add_init_script(script=SANITIZE_JS)  # typed text the page echoes cannot become script
        await page.goto(f"{origin}/miniwob/{task_file}", wait_until="load")
    except BaseException:
        pool.release(context)
        raise
    return context, page, blocked


def _release_when_done(pool: Any, future: asyncio.Future[tuple[Any, Any, list[str]]]) -> None:
    def release(done: asyncio.Future[tuple[Any, Any, list[str]]]) -> None:
        if not done.cancelled() and done.exception() is None:
            pool.release(done.result()[0])

    future.add_done_callback(release)


async def take_ready(pool: Any, key: tuple[str, str]) -> tuple[Any, Any, list[str]] | None:
    """The prepared page for ``key`` when there is a healthy one."""
    future = _ready().pop(key, None)
    if future is None:
        return None
    try:
        opened = await asyncio.shield(future)
    except asyncio.CancelledError:
        _release_when_done(pool, future)
        raise
    except Exception:
        return None
    context, page, _ = opened
    if page.is_closed() or not context.browser.is_connected():
        pool.release(context)
        return None
    return opened


def prepare_next(pool: Any, key: tuple[str, str], origin: str, task_file: str) -> None:
    ready = _ready()
    # One background page load at a time: under concurrent episodes the preloading must not
    # multiply the browser's work (the pool's spare context is prepared regardless).
    if key in ready or any(not future.done() for future in ready.values()):
        return
    future = asyncio.ensure_future(open_task_page(pool, origin, task_file))
    # A page that fails to load (the browser closing) is simply not used; mark its error seen.
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    ready[key] = future
    while len(ready) > _READY_LIMIT:
        _, oldest = ready.popitem(last=False)
        _release_when_done(pool, oldest)
