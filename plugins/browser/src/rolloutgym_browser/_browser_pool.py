"""The pooled Chromium: one browser per process (on the browser service loop), fresh contexts
taken from a pre-created spare, a dead browser replaced at the next episode; used by the
``chromium`` backend (:mod:`rolloutgym_browser._chromium`) and MiniWoB++ pages."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from typing import Any

from rolloutgym.install_hints import pip_install

from ._backend import BrowserError
from ._model import Page
from ._server import SiteServer
from ._service import get_service
from ._site import SiteApp

__all__ = ["ACTION_TIMEOUT_MS", "CHROMIUM_ARGS", "BrowserPool", "find_chromium", "get_pool", "release_result"]

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # No back-forward cache and no browsing-instance swap: a same-site navigation reuses
    # the renderer that the pool's warm-up page started.
    "--disable-features=BackForwardCache,ProactivelySwapBrowsingInstance",
)
"""Launch flags: no sandbox (root in containers), and no background traffic to Google."""

ACTION_TIMEOUT_MS = 15_000

_ABANDON_WAIT_S = 5.0
_CONTEXT_CLOSE_S = 15.0


def find_chromium(path: str | None = None) -> str:
    """The Chromium executable: ``path``, ``$ROLLOUTGYM_CHROMIUM``, or ``chromium`` on PATH.

    Raises:
        BrowserError: naming what was tried and how to install Chromium.
    """
    configured = path or os.environ.get("ROLLOUTGYM_CHROMIUM")
    # An explicit choice is used or reported, never silently replaced by another browser.
    candidates = [configured] if configured else ["chromium", "chromium-browser", "/usr/bin/chromium"]
    for candidate in candidates:
        if not candidate:
            continue
        found = shutil.which(candidate) or (
            candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None
        )
        if found:
            return found
    tried = ", ".join(candidate for candidate in candidates if candidate)
    raise BrowserError(
        f"Chromium was not found (tried {tried}). Install it with 'apt-get install chromium', set "
        "ROLLOUTGYM_CHROMIUM=/path/to/chromium, or use the pure-Python backend with --backend dom"
    )


def _playwright_error() -> type[BaseException]:
    from playwright.async_api import Error

    return Error


class _BlankSite:
    """The pool's warm-up page."""

    def initial_state(self, setup: Any = None) -> dict[str, Any]:
        return {}

    def render(self, path: str, query: Any, state: Any) -> Page | None:
        return Page("/", "")

    def submit(self, path: str, fields: Any, state: Any) -> str | None:
        return None


class BrowserPool:
    """The process's Chromium (on the service loop) with one spare context ready."""

    def __init__(self, executable_path: str) -> None:
        self.executable_path = executable_path
        self._playwright: Any = None
        self._browser: Any = None
        self._spare: asyncio.Task[Any] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._acquiring: set[asyncio.Task[tuple[Any, Any]]] = set()
        self._launch_lock = asyncio.Lock()
        self._warm_server: SiteServer | None = None
        self.launches = 0
        self.open_contexts = 0

    async def _ensure_browser(self) -> Any:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        # One launch at a time: concurrent first episodes must share one browser.
        async with self._launch_lock:
            return await self._launch_if_needed()

    async def _launch_if_needed(self) -> Any:
        if self._browser is not None and not self._browser.is_connected():
            self._browser = None
            self._spare = None
        if self._browser is None:
            try:
                from playwright.async_api import async_playwright
            except ImportError:
                raise BrowserError(
                    f"the chromium backend needs Playwright: {pip_install('rolloutgym-browser', 'chromium')} "
                    "(or use --backend dom)"
                ) from None
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            try:
                self._browser = await self._playwright.chromium.launch(
                    executable_path=self.executable_path, args=list(CHROMIUM_ARGS), headless=True
                )
            except _playwright_error() as exc:
                raise BrowserError(f"could not start Chromium at {self.executable_path}: {exc}") from None
            self.launches += 1
        return self._browser

    async def _new_context(self) -> tuple[Any, Any]:
        browser = await self._ensure_browser()
        context = await browser.new_context(viewport={"width": 1024, "height": 768}, service_workers="block")
        self.open_contexts += 1
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        try:
            page = await context.new_page()
            # A new page starts in about:blank; its first navigation to the local site
            # would start a renderer process. Loading a blank page from 127.0.0.1 now
            # (same site: ports do not count) makes the episode's first load fast.
            await page.goto(await self._warm_url(), wait_until="load")
        except BaseException:
            self.release(context)
            raise
        return context, page

    async def _warm_url(self) -> str:
        if self._warm_server is None:
            server = SiteServer(SiteApp(_BlankSite()), internal=True)
            await server.start()
            self._warm_server = server
        return self._warm_server.origin + "/"

    def _refill(self) -> None:
        # Concurrent acquires may both get here: keep one spare, never orphan one.
        if self._spare is None:
            self._spare = asyncio.ensure_future(self._new_context())

    async def acquire(self) -> tuple[Any, Any]:
        """A fresh ``(context, page)``: the prepared spare when there is one."""
        spare, self._spare = self._spare, None
        pair = None
        if spare is not None:
            try:
                pair = await spare
            except Exception:
                pair = None
            if pair is not None and not pair[0].browser.is_connected():
                pair = None
        if pair is None:
            pair = await self._new_context()
        return pair

    def prepare_spare(self) -> None:
        """Start preparing the next episode's context (called once a page has loaded, so the
        work does not compete with that load)."""
        if self._browser is not None and self._browser.is_connected():
            self._refill()

    def start_acquire(self) -> asyncio.Task[tuple[Any, Any]]:
        """:meth:`acquire` as a task the pool tracks (so :meth:`settle` can wait for it)."""
        task = asyncio.ensure_future(self.acquire())
        self._acquiring.add(task)
        task.add_done_callback(self._acquiring.discard)
        return task

    def release(self, context: Any) -> None:
        """Close ``context`` in the background (tracked; :meth:`close` waits for it)."""

        async def close_context() -> None:
            with contextlib.suppress(Exception):  # a dead browser's context may never answer
                await asyncio.wait_for(context.close(), _CONTEXT_CLOSE_S)
            self.open_contexts -= 1

        task = asyncio.ensure_future(close_context())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def settle(self) -> None:
        """Wait until acquisitions in flight are done and released contexts are closed."""
        while self._closing or self._acquiring:
            await asyncio.gather(*self._acquiring, *self._closing, return_exceptions=True)
            await asyncio.sleep(0)  # let done-callbacks release what cancelled episodes acquired

    async def abandon(self) -> None:
        """Give up on a browser that stopped answering: kill its processes and forget it and its
        Playwright driver, so the next episode launches both anew. Episodes still using it fail
        with an env error (their contexts are gone)."""
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.cancel()
        for pid in _browser_processes():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for closing in (browser.close() if browser else None, playwright.stop() if playwright else None):
            if closing is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(closing, _ABANDON_WAIT_S)

    def browser_pid(self) -> int | None:
        """The main Chromium process id (for crash tests), when known."""
        return _find_browser_pid(self.executable_path)

    async def close(self) -> None:
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.cancel()
            with contextlib.suppress(BaseException):
                context, _ = await spare
                await asyncio.wait_for(context.close(), _CONTEXT_CLOSE_S)
                self.open_contexts -= 1
        await self.settle()
        warm, self._warm_server = self._warm_server, None
        if warm is not None:
            await warm.close()
        browser, self._browser = self._browser, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), _CONTEXT_CLOSE_S)
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(playwright.stop(), _CONTEXT_CLOSE_S)
        # Chromium's helper processes exit shortly after the browser: wait for them.
        deadline = asyncio.get_running_loop().time() + 10
        while _browser_processes() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)


def _browser_processes() -> list[int]:
    """Chromium processes descended from this process."""
    from ._processes import descendants

    return [
        pid
        for pid, command in descendants(os.getpid())
        if command and os.path.basename(command[0]).startswith(("chromium", "chrome"))
    ]


def _find_browser_pid(executable: str) -> int | None:
    """The pid of a Chromium main process (no ``--type=``) descended from this process."""
    from ._processes import descendants

    for pid, command in descendants(os.getpid()):
        if (
            command
            and os.path.basename(command[0]).startswith(("chromium", "chrome"))
            and not any(part.startswith("--type=") for part in command)
        ):
            return pid
    return None


def release_result(pool: BrowserPool, done: asyncio.Future[Any]) -> None:
    if not done.cancelled() and done.exception() is None:
        pool.release(done.result()[0])


async def get_pool(executable_path: str) -> BrowserPool:
    """The pool on the service loop (created on first use)."""
    service = get_service()
    if service.pool is None or service.pool.executable_path != executable_path:
        if service.pool is not None:
            await service.pool.close()
        service.pool = BrowserPool(executable_path)
    pool: BrowserPool = service.pool
    return pool
