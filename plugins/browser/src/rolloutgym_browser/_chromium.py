"""The ``chromium`` backend: async Playwright driving Debian's Chromium.

One browser per process (the :class:`BrowserPool`, on the browser service loop), one
fresh context per episode, taken from a pre-created spare so that a reset costs a page
load. Each context may reach only its episode's site origin: every other request is
aborted by a route handler and reported in :attr:`ChromiumBackend.blocked_requests`.
A dead browser is detected and replaced at the next episode.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
from typing import Any

from rolloutgym.install_hints import pip_install

from ._backend import Backend, BrowserError
from ._model import Page, Snapshot, SnapshotElement, normalise_text
from ._server import SiteServer
from ._service import get_service
from ._site import SiteApp

__all__ = ["CHROMIUM_ARGS", "BrowserPool", "ChromiumBackend", "find_chromium"]

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

_SNAPSHOT_JS = """() => {
  const out = [];
  for (const el of document.querySelectorAll('[data-rg]')) {
    const kind = el.dataset.rgkind;
    let depth = 0;
    for (let p = el.parentElement; p; p = p.parentElement) if (p.hasAttribute('data-rg')) depth++;
    let label;
    if (kind === 'textbox' || kind === 'select' || kind === 'checkbox' || kind === 'form')
      label = el.getAttribute('aria-label') || '';
    else if (kind === 'image') label = el.getAttribute('alt') || '';
    else label = el.textContent || '';
    out.push([
      el.dataset.rg, kind, label, depth,
      (kind === 'textbox' || kind === 'select') ? el.value : '',
      kind === 'checkbox' ? el.checked : false,
      kind === 'link' ? (el.getAttribute('href') || '') : '',
      kind === 'select' ? Array.from(el.options, o => [o.value, o.textContent || '']) : [],
      kind === 'textbox' ? (el.getAttribute('placeholder') || '') : '',
      kind === 'textbox' ? (el.tagName === 'TEXTAREA' ? 'textarea' : (el.getAttribute('type') || 'text')) : '',
    ]);
  }
  return [location.href, document.title, out];
}"""


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


_NO_NAVIGATION_SECONDS = 5


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
            with contextlib.suppress(Exception):
                await context.close()
            self.open_contexts -= 1

        task = asyncio.ensure_future(close_context())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def settle(self) -> None:
        """Wait until acquisitions in flight are done and released contexts are closed."""
        while self._closing or self._acquiring:
            await asyncio.gather(*self._acquiring, *self._closing, return_exceptions=True)
            await asyncio.sleep(0)  # let done-callbacks release what cancelled episodes acquired

    def browser_pid(self) -> int | None:
        """The main Chromium process id (for crash tests), when known."""
        return _find_browser_pid(self.executable_path)

    async def close(self) -> None:
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.cancel()
            with contextlib.suppress(BaseException):
                context, _ = await spare
                await context.close()
                self.open_contexts -= 1
        await self.settle()
        warm, self._warm_server = self._warm_server, None
        if warm is not None:
            await warm.close()
        browser, self._browser = self._browser, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await browser.close()
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            with contextlib.suppress(Exception):
                await playwright.stop()
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


def _release_result(pool: BrowserPool, done: asyncio.Future[Any]) -> None:
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


class ChromiumBackend(Backend):
    """Runs each episode in a fresh context of the pooled Chromium."""

    name = "chromium"

    def __init__(self, *, chromium_path: str | None = None) -> None:
        self.executable_path = find_chromium(chromium_path)
        self._service = get_service()
        self._server: SiteServer | None = None
        self._context: Any = None
        self._page: Any = None
        self._blocked: list[str] = []

    # -- everything below runs on the service loop through _run -----------------------

    async def _run(self, what: str, coroutine: Any) -> Any:
        try:
            return await self._service.call(coroutine)
        except BrowserError:
            raise
        except Exception as exc:
            if type(exc).__module__.startswith("playwright"):
                raise BrowserError(
                    f"Chromium failed while {what}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}. "
                    "This episode is recorded as an environment error; the next one starts a new browser if this one "
                    "died."
                ) from None
            raise

    async def _start(self, app: SiteApp, url: str) -> None:
        await self._stop()
        if self._server is None:
            server = SiteServer(app)
            await server.start()
            self._server = server
        self._server.app = app
        pool = await get_pool(self.executable_path)
        # The context must not be lost if this episode is cancelled while it is being
        # acquired: a cancelled acquisition hands the context straight back to the pool.
        acquiring = pool.start_acquire()
        try:
            self._context, self._page = await asyncio.shield(acquiring)
        except asyncio.CancelledError:
            acquiring.add_done_callback(lambda done: _release_result(pool, done))
            raise
        self._blocked = []
        origin = self._server.origin
        blocked = self._blocked

        async def block(route: Any) -> None:
            blocked.append(route.request.url)
            with contextlib.suppress(Exception):
                await route.abort("blockedbyclient")

        # Only requests outside the origin are intercepted, so local traffic pays nothing.
        await self._context.route(re.compile(rf"^(?!{re.escape(origin)}(/|$))"), block)
        await self._page.goto(origin + url, wait_until="load")
        pool.prepare_spare()

    async def start(self, app: SiteApp, url: str) -> None:
        await self._run(f"opening {url}", self._start(app, url))

    async def open(self, url: str) -> None:
        assert self._server is not None
        await self._run(f"opening {url}", self._page.goto(self._server.origin + url, wait_until="load"))

    async def _snapshot(self) -> Snapshot:
        assert self._server is not None
        href, title, raw = await self._page.evaluate(_SNAPSHOT_JS)
        origin = self._server.origin
        url = href[len(origin) :] or "/" if href.startswith(origin) else href
        elements = tuple(
            SnapshotElement(
                element_id,
                kind,
                normalise_text(label),
                depth,
                value=value,
                checked=bool(checked),
                href=link,
                options=tuple((option_value, normalise_text(option_label)) for option_value, option_label in options),
                placeholder=placeholder,
                input_type=input_type,
            )
            for element_id, kind, label, depth, value, checked, link, options, placeholder, input_type in raw
        )
        return Snapshot(url, title, elements)

    async def snapshot(self) -> Snapshot:
        return await self._run("reading the page", self._snapshot())

    def _locator(self, element_id: str) -> Any:
        return self._page.locator(f'[data-rg="{element_id}"]')

    async def _click(self, element_id: str, navigates: bool) -> None:
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        locator = self._locator(element_id)
        if navigates:
            # A click that should navigate but does not (a button the site does not act on)
            # leaves the page as it is, as on the dom backend; it is not a browser failure.
            with contextlib.suppress(PlaywrightTimeout):
                async with self._page.expect_navigation(wait_until="load", timeout=_NO_NAVIGATION_SECONDS * 1000):
                    await locator.click()
        else:
            await locator.click()

    async def click(self, element_id: str, *, navigates: bool) -> None:
        await self._run(f"clicking {element_id!r}", self._click(element_id, navigates))

    async def fill(self, element_id: str, text: str) -> None:
        await self._run(f"typing into {element_id!r}", self._locator(element_id).fill(text))

    async def select(self, element_id: str, value: str) -> None:
        await self._run(f"selecting in {element_id!r}", self._locator(element_id).select_option(value=value))

    async def set_checked(self, element_id: str, checked: bool) -> None:
        await self._run(f"checking {element_id!r}", self._locator(element_id).set_checked(checked))

    async def scroll(self, lines: int) -> None:
        await self._run("scrolling", self._page.mouse.wheel(0, lines * 20))

    async def screenshot(self) -> bytes | None:
        data: bytes = await self._run("taking a screenshot", self._page.screenshot(type="png"))
        return data

    @property
    def blocked_requests(self) -> list[str]:
        return list(self._blocked)

    async def _stop(self) -> None:
        context, self._context, self._page = self._context, None, None
        if context is not None:
            pool = await get_pool(self.executable_path)
            pool.release(context)

    async def stop(self) -> None:
        if not self._service.running:
            self._context = self._page = None
            return
        await self._service.call(self._stop())

    async def _close(self) -> None:
        await self._stop()
        server, self._server = self._server, None
        if server is not None:
            await server.close()

    async def close(self) -> None:
        if not self._service.running:
            self._context = self._page = self._server = None
            return
        await self._service.call(self._close())
