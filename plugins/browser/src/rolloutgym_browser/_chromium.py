"""The ``chromium`` backend: async Playwright driving Debian's Chromium.

One browser per process (the :class:`~rolloutgym_browser._browser_pool.BrowserPool`, on the
browser service loop), one fresh context per episode, taken from a pre-created spare so that a
reset costs a page load. Each context may reach only its episode's site origin: every other
request is aborted by a route handler and reported in :attr:`ChromiumBackend.blocked_requests`.
A dead browser is detected and replaced at the next episode.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

from ._backend import Backend, BrowserError
from ._browser_pool import find_chromium, get_pool, release_result
from ._model import Snapshot, SnapshotElement, normalise_text
from ._server import SiteServer
from ._service import get_service
from ._site import SiteApp

__all__ = ["ChromiumBackend"]

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


_NO_NAVIGATION_SECONDS = 5


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
            return await self._service.call(coroutine, what=what)
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
            acquiring.add_done_callback(lambda done: release_result(pool, done))
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
        await self._service.call(self._stop(), what="ending the episode")

    async def _close(self) -> None:
        await self._stop()
        server, self._server = self._server, None
        if server is not None:
            await server.close()

    async def close(self) -> None:
        if not self._service.running:
            self._context = self._page = self._server = None
            return
        await self._service.call(self._close(), what="closing the episode")
