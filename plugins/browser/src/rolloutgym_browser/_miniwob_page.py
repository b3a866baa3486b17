"""One MiniWoB++ episode in a pooled Chromium context (async Playwright, on the browser service loop).

The task page is the ``miniwob`` package's own HTML file, served from 127.0.0.1 by a
:class:`~rolloutgym_browser._miniwob_server.StaticServer` of the package's ``html`` folder; its own
JavaScript generates the episode (seeded with ``Math.seedrandom``, as the package's Selenium
driver does) and computes the reward (``WOB_RAW_REWARD_GLOBAL``, ``WOB_DONE_GLOBAL``). The
context may load only that server's origin: every other request (the network, ``file://``)
is aborted by a route handler and reported in :attr:`MiniWoBPage.blocked_requests`.

Actions are real input events: ``click`` is a mouse click at the element's centre (what a
person does, so overlapping dialogs and handlers on spans behave as in the benchmark),
``type`` fills a field, ``drag`` presses, moves and releases the mouse. A Playwright failure
caused by the action itself (a key name Chromium does not know, a disabled field) becomes a
:class:`~rolloutgym_browser._actions.ActionError`; one caused by the browser becomes a
:class:`~rolloutgym_browser.BrowserError`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ._actions import ActionError
from ._backend import BrowserError
from ._browser_pool import get_pool
from ._miniwob_preload import open_task_page, prepare_next, server_for, take_ready
from ._model import normalise_text
from ._service import get_service

__all__ = ["EPISODE_MAX_TIME_MS", "MiniWoBPage", "PageElement"]

#: The page's own episode timer, in ms. MiniWoB's default (10 s of wall-clock time) would
#: fail any language-model agent that thinks for longer, so the timer is set to setTimeout's
#: maximum; the environment's step budget limits episodes instead.
EPISODE_MAX_TIME_MS = 2_147_483_647

# Outside the task: the instruction (shown as the task), the package's reward display,
# the click visualiser and the cover that hides the page between episodes.
_SNAPSHOT_JS = r"""() => {
  const skip = new Set(['query', 'reward-display', 'click-canvas', 'sync-task-cover']);
  if (window.__rgNext === undefined) window.__rgNext = 1;
  const out = [];
  const idOf = (el) => {
    let v = el.getAttribute('data-rg');
    if (!v) { v = String(window.__rgNext++); el.setAttribute('data-rg', v); }
    return v;
  };
  const ownText = (el) =>
    Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join(' ').trim();
  const labelOf = (el) => {
    if (el.labels && el.labels.length) return el.labels[0].textContent || '';
    const next = el.nextSibling;
    if (next && next.nodeType === 3) return next.textContent || '';
    if (next && next.nodeType === 1 && next.tagName === 'LABEL') return next.textContent || '';
    return el.getAttribute('aria-label') || el.value || '';
  };
  const walk = (el, depth) => {
    if (el.id && skip.has(el.id)) return;
    const tag = el.tagName.toLowerCase();
    if (['script', 'style', 'head', 'noscript', 'br', 'option', 'title', 'defs'].includes(tag)) return;
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') return;
    const rect = el.getBoundingClientRect();
    let kind = null, label = '', value = '', checked = false, href = '', options = [], placeholder = '', itype = '';
    if (tag === 'input') {
      const type = (el.getAttribute('type') || 'text').toLowerCase();
      if (type === 'hidden') return;
      if (type === 'checkbox' || type === 'radio') { kind = type; checked = el.checked; label = labelOf(el); }
      else if (['button', 'submit', 'reset'].includes(type)) { kind = 'button'; label = el.value || ''; }
      else {
        kind = 'textbox'; value = el.value; placeholder = el.getAttribute('placeholder') || ''; itype = type;
        label = el.getAttribute('aria-label') || el.getAttribute('name') || el.id || '';
      }
    } else if (tag === 'textarea') {
      kind = 'textbox'; itype = 'textarea'; value = el.value; placeholder = el.getAttribute('placeholder') || '';
      label = el.id || '';
    } else if (tag === 'select') {
      kind = 'select'; value = el.value; label = el.id || '';
      options = Array.from(el.options, o => [o.value, o.textContent || '']);
    } else if (tag === 'button') {
      kind = 'button'; label = el.textContent || el.getAttribute('title') || '';
    } else if (tag === 'a') {
      kind = 'link'; label = el.textContent || el.getAttribute('title') || ''; href = el.getAttribute('href') || '';
    } else if (tag === 'img') {
      kind = 'image'; label = el.getAttribute('alt') || (el.getAttribute('src') || '').split('/').pop();
    } else if (tag === 'canvas') {
      kind = 'canvas';
    } else if (el instanceof SVGElement && tag !== 'svg' && tag !== 'g') {
      kind = 'shape';
      const fill = el.getAttribute('fill') || style.fill || '';
      const text = tag === 'text' ? (el.textContent || '') : '';
      label = tag + (text ? ' ' + JSON.stringify(text) : '') + (fill && fill !== 'none' ? ' fill ' + fill : '');
    } else if (tag !== 'label' || !el.querySelector('input')) {
      const text = ownText(el);
      // Text the page styles as clickable (MiniWoB's links are spans with cursor: pointer).
      if (text) { kind = style.cursor === 'pointer' ? 'link' : 'text'; label = text; }
      // A focusable widget without text (a slider's handle, a custom control).
      else if (el.hasAttribute('tabindex') || el.hasAttribute('role')) {
        kind = 'widget';
        label = el.getAttribute('role') || el.getAttribute('aria-label')
          || (el.getAttribute('class') || '').split(' ').slice(0, 2).join(' ');
      }
    }
    if (rect.width <= 0 && rect.height <= 0 && kind !== null) return;
    if (kind !== null) {
      out.push([idOf(el), kind, label, depth, String(value), checked, href, options, placeholder, itype,
        Math.round(rect.left + rect.width / 2), Math.round(rect.top + rect.height / 2)]);
    }
    const leaf = ['button', 'select', 'textarea', 'input', 'shape', 'canvas', 'image'].includes(kind || tag);
    if (leaf || tag === 'text') return;
    for (const child of el.children) walk(child, depth + (kind !== null && kind !== 'text' ? 1 : 0));
  };
  walk(document.body, 0);
  return [location.pathname.split('/').pop(), document.title, out];
}"""

_CENTRE_JS = """(id) => {
  const el = document.querySelector('[data-rg="' + id + '"]');
  if (!el) return null;
  const rect = el.getBoundingClientRect();
  if (rect.width <= 0 && rect.height <= 0) return null;
  return [rect.left + rect.width / 2, rect.top + rect.height / 2];
}"""

# null when the tab no longer shows the task page (a link of the page led elsewhere).
_STATUS_JS = """() => typeof WOB_DONE_GLOBAL === 'undefined' ? null
  : [WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL, WOB_REWARD_GLOBAL,
     WOB_REWARD_REASON == null ? null : String(WOB_REWARD_REASON)]"""

# How long the page may take to report WOB_TASK_READY after an episode starts.
_READY_SECONDS = 5.0
# A short pause after each action, so the page's own handlers (and jQuery's fast
# animations) run before the next observation.
_SETTLE_SECONDS = 0.05
_ACTION_TIMEOUT_MS = 3000


class PageElement(tuple):  # type: ignore[type-arg]
    """``(id, kind, label, depth, value, checked, href, options, placeholder, input_type, x, y)``."""

    __slots__ = ()

    id = property(lambda self: self[0])
    kind = property(lambda self: self[1])
    label = property(lambda self: self[2])
    depth = property(lambda self: self[3])
    value = property(lambda self: self[4])
    checked = property(lambda self: self[5])
    href = property(lambda self: self[6])
    options = property(lambda self: self[7])
    placeholder = property(lambda self: self[8])
    input_type = property(lambda self: self[9])
    x = property(lambda self: self[10])
    y = property(lambda self: self[11])


def _is_action_failure(exc: BaseException) -> bool:
    """A Playwright error caused by what the action asked (not by a dead browser)."""
    text = str(exc)
    return type(exc).__module__.startswith("playwright") and "closed" not in text.lower()


class MiniWoBPage:
    """The page of one environment: a fresh pooled context per episode."""

    def __init__(self, executable_path: str, html_root: Path) -> None:
        self.executable_path = executable_path
        self.html_root = html_root
        self._service = get_service()
        self._context: Any = None
        self._page: Any = None
        self._blocked: list[str] = []

    @property
    def blocked_requests(self) -> list[str]:
        return list(self._blocked)

    async def _run(self, what: str, coroutine: Any) -> Any:
        try:
            return await self._service.call(coroutine, what=what)
        except (BrowserError, ActionError):
            raise
        except Exception as exc:
            if type(exc).__module__.startswith("playwright"):
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise BrowserError(
                    f"Chromium failed while {what}: {first}. This episode is recorded as an environment error; "
                    "the next one starts a new browser if this one died."
                ) from None
            raise

    # -- episode ----------------------------------------------------------------------

    async def _start(self, task_file: str, seed: int) -> None:
        await self._stop()
        server = await server_for(self.html_root)
        pool = await get_pool(self.executable_path)
        key = (self.executable_path, server.origin + "/miniwob/" + task_file)
        opened = await take_ready(pool, key)
        if opened is None:
            opened = await open_task_page(pool, server.origin, task_file)
        self._context, self._page, self._blocked = opened
        pool.prepare_spare()
        prepare_next(pool, key, server.origin, task_file)
        await self._page.evaluate(
            """([seed, maxTime]) => {
              core.EPISODE_MAX_TIME = maxTime;
              Math.seedrandom(seed);
              core.startEpisodeReal();
            }""",
            [seed, EPISODE_MAX_TIME_MS],
        )
        deadline = asyncio.get_running_loop().time() + _READY_SECONDS
        while not await self._page.evaluate("() => WOB_TASK_READY"):
            if asyncio.get_running_loop().time() > deadline:
                raise BrowserError(f"the MiniWoB page {task_file} did not become ready within {_READY_SECONDS:g} s")
            await asyncio.sleep(0.02)

    async def start(self, task_file: str, seed: int) -> None:
        """Open ``task_file`` in a fresh context and start an episode seeded with ``seed``."""
        await self._run(f"opening {task_file}", self._start(task_file, seed))

    async def utterance(self) -> str:
        """The instruction, as the package's driver reads it (some pages return ``{utterance, fields}``)."""
        response = await self._run("reading the instruction", self._page.evaluate("() => core.getUtterance()"))
        if isinstance(response, dict):
            response = response.get("utterance", "")
        return normalise_text(str(response))

    async def elements(self) -> tuple[str, str, list[PageElement]]:
        """``(file name, title, elements)`` of the page as displayed now."""
        name, title, raw = await self._run("reading the page", self._page.evaluate(_SNAPSHOT_JS))
        elements = [
            PageElement(
                (
                    item[0],
                    item[1],
                    normalise_text(item[2]),
                    item[3],
                    item[4],
                    bool(item[5]),
                    item[6],
                    tuple((value, normalise_text(label)) for value, label in item[7]),
                    item[8],
                    item[9],
                    item[10],
                    item[11],
                )
            )
            for item in raw
        ]
        return name, title, elements

    async def status(self) -> tuple[bool, float, float, str | None]:
        """``(done, raw reward, time-scaled reward, reason)`` as the page reports them.

        A tab that left the task page (its own link led to another file of the package) is
        done with -1, as MiniWoB's failure reward.
        """
        status = await self._run("reading the reward", self._page.evaluate(_STATUS_JS))
        if status is None:
            return True, -1.0, -1.0, "the tab left the task page"
        done, raw, scaled, reason = status
        return bool(done), float(raw), float(scaled), reason

    async def end_episode(self, reward: float, reason: str) -> None:
        """End the page's episode as its own timer would (``core.endEpisode``)."""
        await self._run(
            "ending the episode",
            self._page.evaluate(
                "([r, why]) => { if (typeof core !== 'undefined') core.endEpisode(r, false, why); }", [reward, reason]
            ),
        )

    # -- actions ------------------------------------------------------------------------

    async def _settle(self) -> None:
        await asyncio.sleep(_SETTLE_SECONDS)

    async def _act(self, what: str, coroutine: Any) -> None:
        try:
            await coroutine
        except Exception as exc:
            if _is_action_failure(exc):
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise ActionError(f"{what} failed: {first}") from None
            raise
        await self._settle()

    async def _click(self, element_id: str) -> None:
        centre = await self._page.evaluate(_CENTRE_JS, element_id)
        if centre is None:
            raise ActionError(f"[{element_id}] is no longer on the page; read the page again")
        await self._act(f"clicking [{element_id}]", self._page.mouse.click(centre[0], centre[1]))

    async def click(self, element_id: str) -> None:
        await self._run(f"clicking {element_id!r}", self._click(element_id))

    async def click_at(self, x: float, y: float) -> None:
        await self._run("clicking", self._act(f"clicking at ({x:g}, {y:g})", self._page.mouse.click(x, y)))

    async def _drag(self, x1: float, y1: float, x2: float, y2: float) -> None:
        mouse = self._page.mouse

        async def gesture() -> None:
            await mouse.move(x1, y1)
            await mouse.down()
            await mouse.move(x2, y2, steps=10)
            await mouse.up()

        await self._act(f"dragging from ({x1:g}, {y1:g}) to ({x2:g}, {y2:g})", gesture())

    async def drag(self, x1: float, y1: float, x2: float, y2: float) -> None:
        await self._run("dragging", self._drag(x1, y1, x2, y2))

    def _locator(self, element_id: str) -> Any:
        return self._page.locator(f'[data-rg="{element_id}"]')

    async def fill(self, element_id: str, text: str) -> None:
        locator = self._locator(element_id)
        await self._run(
            f"typing into {element_id!r}",
            self._act(f"typing into [{element_id}]", locator.fill(text, timeout=_ACTION_TIMEOUT_MS)),
        )

    async def select(self, element_id: str, value: str) -> None:
        locator = self._locator(element_id)
        await self._run(
            f"selecting in {element_id!r}",
            self._act(f"selecting in [{element_id}]", locator.select_option(value=value, timeout=_ACTION_TIMEOUT_MS)),
        )

    async def set_checked(self, element_id: str, checked: bool) -> None:
        locator = self._locator(element_id)
        await self._run(
            f"checking {element_id!r}",
            self._act(f"checking [{element_id}]", locator.set_checked(checked, timeout=_ACTION_TIMEOUT_MS)),
        )

    async def press(self, key: str) -> None:
        await self._run("pressing a key", self._act(f"pressing {key!r}", self._page.keyboard.press(key)))

    async def scroll(self, pixels: int) -> None:
        await self._run("scrolling", self._act("scrolling", self._page.mouse.wheel(0, pixels)))

    async def screenshot(self) -> bytes:
        """A PNG of the task area (``#wrap``, MiniWoB's 160x210 px region), or of the viewport."""

        async def take() -> bytes:
            wrap = self._page.locator("#wrap")
            if await wrap.count():
                data: bytes = await wrap.screenshot(type="png", timeout=_ACTION_TIMEOUT_MS)
                return data
            data = await self._page.screenshot(type="png")
            return data

        result: bytes = await self._run("taking a screenshot", take())
        return result

    # -- teardown -----------------------------------------------------------------------

    async def _stop(self) -> None:
        context, self._context, self._page = self._context, None, None
        if context is not None:
            pool = await get_pool(self.executable_path)
            pool.release(context)

    async def stop(self) -> None:
        """Release this episode's context (it is closed in the background). Safe to call twice."""
        if not self._service.running:
            self._context = self._page = None
            return
        await self._service.call(self._stop(), what="ending the episode")

    async def close(self) -> None:
        """Release this episode's context. Safe to call twice."""
        await self.stop()
