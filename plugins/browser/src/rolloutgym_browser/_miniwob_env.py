"""The MiniWoB++ environment: one task page of the ``miniwob`` package per episode, on Chromium.

The interface is ``browser/shop-v0``'s: chat messages in, assistant messages with tool calls
out; the first observation holds the system prompt and ``Task: <utterance>`` followed by the
page text, each later one a ``tool`` message per call with the page text after the last.
Every call passes the browser plugin's shared validation (:func:`parse_tool_call`,
:func:`prepare_typed_text`) or :mod:`~rolloutgym_browser._miniwob_tools`'s for the three MiniWoB
tools; a refused call is an invalid action answered with ``error: ...``, never an environment error.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from rolloutgym_protocol import AsyncEnv, Score, spaces
from rolloutgym_protocol.errors import ConfigError, EnvClosedError
from rolloutgym_protocol.toolcalls import normalize_tool_action

from ._actions import ActionError, CheckedToolCall, element_error, option_value, prepare_typed_text
from ._dispatch import dispatch_tool_calls, tool_calls_of, with_page
from ._miniwob_page import MiniWoBPage, PageElement
from ._miniwob_server import miniwob_html_root
from ._miniwob_tools import MINIWOB_TOOLS, parse_miniwob_call

if TYPE_CHECKING:
    from .miniwob import MiniWoBTask

__all__ = ["MiniWoBEnv", "format_page"]

SYSTEM_PROMPT = (
    "You are using a small web page through tools to do one task. After every action you see the page as "
    "text: its elements, each with an id in brackets, e.g. [12]; elements that are not form fields also show "
    "their centre position @(x,y) in pixels. Use click, type, select and check on those ids, click_at and "
    "drag for positions (shapes, canvases, sliders), press_key for keys, scroll when the text says there are "
    "more lines. The page ends the episode by itself when the task is done; call answer (or reply without a "
    "tool call) to give up."
)

_POSITIONED = frozenset({"text", "image", "shape", "canvas", "link", "button", "widget"})


def _quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def _line(element: PageElement) -> str:
    indent = "  " * element.depth
    prefix = f"{indent}[{element.id}] "
    where = f" @({element.x},{element.y})" if element.kind in _POSITIONED else ""
    label = _quote(element.label)
    if element.kind == "textbox":
        note = (
            " (multi-line)"
            if element.input_type == "textarea"
            else (f" ({element.input_type})" if element.input_type not in ("", "text") else "")
        )
        extra = f" placeholder={_quote(element.placeholder)}" if element.placeholder and not element.value else ""
        return f"{prefix}textbox {label}{note} value={_quote(element.value)}{extra}"
    if element.kind in ("checkbox", "radio"):
        return f"{prefix}{element.kind} {label} checked={'true' if element.checked else 'false'}"
    if element.kind == "select":
        chosen = next(
            (option_label for value, option_label in element.options if value == element.value), element.value
        )
        choices = ", ".join(_quote(option_label) for _, option_label in element.options)
        return f"{prefix}combobox {label} selected={_quote(chosen)} options=[{choices}]"
    if element.kind == "link":
        return f"{prefix}link {label}{where}"
    if element.kind == "canvas":
        return f"{prefix}canvas{where}"
    return f"{prefix}{element.kind} {label}{where}"


def format_page(name: str, title: str, elements: list[PageElement], *, offset: int, viewport: int) -> tuple[str, int]:
    """The page text (``browser/shop-v0``'s layout: header, ``viewport`` lines from ``offset``, scroll notes)."""
    lines = [_line(element) for element in elements]
    total = len(lines)
    offset = max(0, min(offset, max(0, total - viewport)))
    body = lines[offset : offset + viewport] or ["(the page is empty)"]
    header = [f"URL: miniwob/{name}", f"Title: {title}"]
    if offset > 0:
        header.append(f"({offset} lines above; scroll up to see them)")
    below = total - offset - len(lines[offset : offset + viewport])
    footer = [f"({below} lines below; scroll down to see them)"] if below > 0 else []
    return "\n".join(header + body + footer), offset


class MiniWoBEnv(AsyncEnv[list[dict[str, Any]], dict[str, Any]]):
    """An episode of one MiniWoB++ task.

    Args:
        task: the task.
        backend: ``"chromium"`` (the only one: the pages run their own JavaScript).
        screenshot: attach a PNG of the task area to each page observation.
        viewport: lines of page text shown at once.
        chromium_path: the Chromium executable (default: ``chromium`` on PATH).
    """

    metadata = {"render_modes": []}
    tools = MINIWOB_TOOLS

    def __init__(
        self,
        task: MiniWoBTask,
        *,
        backend: str = "chromium",
        screenshot: bool = False,
        viewport: int = 60,
        chromium_path: str | None = None,
    ) -> None:
        if backend != "chromium":
            raise ConfigError(
                f"browser/miniwob-v0 runs only on the chromium backend (its pages compute the task and the reward "
                f"in their own JavaScript, which the {backend!r} backend cannot run); drop --backend or use "
                "--backend chromium"
            )
        if viewport < 5:
            raise ConfigError(f"viewport must show at least 5 lines, got {viewport}")
        from ._browser_pool import find_chromium

        self.task = task
        self.html_root = miniwob_html_root()
        self.page = MiniWoBPage(find_chromium(chromium_path), self.html_root)
        self.screenshot = screenshot
        self.viewport = viewport
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self._active = False
        self._closed = False
        self._offset = 0
        self._invalid = 0
        self._seed = 0
        self._utterance = ""
        self._elements: tuple[str, str, list[PageElement]] | None = None
        self._oracle: Any = None

    # -- episode ----------------------------------------------------------------------

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        await super().reset(seed=seed, options=options)
        if self._closed:
            raise EnvClosedError("this MiniWoB environment is closed; create a new one")
        self._seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        self._active = False
        self._offset = 0
        self._invalid = 0
        self._elements = None
        self._oracle = None
        await self.page.start(self.task.file, self._seed)
        self._active = True
        self._utterance = await self.page.utterance()
        page = await self._page_content()
        user: dict[str, Any] = {"role": "user", "content": with_page(f"Task: {self._utterance}", page)}
        return [{"role": "system", "content": SYSTEM_PROMPT}, user], self._info()

    async def current_elements(self) -> tuple[str, str, list[PageElement]]:
        """The page as displayed now (cached until the next action)."""
        if self._elements is None:
            self._elements = await self.page.elements()
        return self._elements

    async def _page_content(self) -> str | list[dict[str, Any]]:
        name, title, elements = await self.current_elements()
        text, self._offset = format_page(name, title, elements, offset=self._offset, viewport=self.viewport)
        if not self.screenshot:
            return text
        image = await self.page.screenshot()
        return [
            {"type": "text", "text": text},
            {"type": "image", "url": "data:image/png;base64," + base64.b64encode(image).decode("ascii")},
        ]

    def _info(self) -> dict[str, Any]:
        return {
            "task_id": self.task.id,
            "seed": self._seed,
            "utterance": self._utterance,
            "backend": "chromium",
            "invalid_actions": self._invalid,
            "blocked_requests": self.page.blocked_requests,
        }

    async def step(
        self, action: dict[str, Any] | str
    ) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if not self._active:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        action = normalize_tool_action(action)  # every accepted shape of a tool call (rolloutgym_protocol.toolcalls)
        calls = tool_calls_of(action)
        if calls is None:
            return await self._finish([], gave_up=True)
        outcome = await dispatch_tool_calls(
            calls,
            parse=parse_miniwob_call,
            execute=self._execute,
            answer_reply="the episode is over",
            page_done=self._page_done,
        )
        self._invalid += outcome.invalid
        if outcome.answer is not None or outcome.page_ended:
            return await self._finish(outcome.messages, gave_up=outcome.answer is not None)
        last = outcome.messages[-1]
        last["content"] = with_page(last["content"], await self._page_content())
        return outcome.messages, 0.0, False, False, self._info()

    async def _page_done(self) -> bool:
        done, *_ = await self.page.status()
        return bool(done)

    async def _finish(
        self, messages: list[dict[str, Any]], *, gave_up: bool
    ) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        done, raw, _, reason = await self.page.status()
        if not done:
            # As the page's own timer would have: core.endEpisode(-1, false, reason).
            await self.page.end_episode(-1.0, "ended before the task was done")
            done, raw, _, reason = await self.page.status()
        self._active = False
        info = self._info()
        feedback = (
            f"the page gave {raw:g}"
            + (f" ({reason})" if reason else "")
            + ("; the agent ended the episode before the page did" if gave_up else "")
        )
        score = Score(
            raw,
            feedback=feedback,
            # Not the time-scaled reward: with the page timer disabled it only measures wall-clock noise.
            metadata={"raw_reward": raw, "reason": reason, "utterance": self._utterance},
        )
        info["score"] = score.to_dict()
        info["done"] = done
        await self.page.stop()
        return messages, score.value, True, False, info

    # -- actions --------------------------------------------------------------------

    async def _element(self, element_id: str, kinds: tuple[str, ...] | None, verb: str) -> PageElement:
        _, _, elements = await self.current_elements()
        found = next((element for element in elements if element.id == element_id), None)
        if found is None:
            ids = [element.id for element in elements if kinds is None or element.kind in kinds]
            raise element_error(element_id, None, ids, kinds, verb)
        if kinds is not None and found.kind not in kinds:
            raise element_error(element_id, found.kind, (), kinds, verb)
        return found

    async def _execute(self, call: CheckedToolCall) -> str:
        arguments = call.arguments
        self._elements = None if call.name != "scroll" else self._elements
        if call.name == "click":
            self._elements = None
            element = await self._element(arguments["element_id"], None, "click")
            await self.page.click(element.id)
            self._elements = None
            return f"clicked [{element.id}]"
        if call.name == "type":
            element = await self._element(arguments["element_id"], ("textbox",), "type into")
            text = prepare_typed_text(element.id, element.input_type, arguments["text"])
            await self.page.fill(element.id, text)
            self._elements = None
            return f"typed into [{element.id}]"
        if call.name == "select":
            element = await self._element(arguments["element_id"], ("select",), "select in")
            wanted = arguments["option"].strip()
            value = option_value(element.id, element.options, wanted)
            await self.page.select(element.id, value)
            self._elements = None
            return f"selected {wanted!r} in [{element.id}]"
        if call.name == "check":
            element = await self._element(arguments["element_id"], ("checkbox", "radio"), "check")
            if element.kind == "radio" and not arguments["checked"]:
                raise ActionError(
                    f"[{element.id}] is a radio button; choose another option of its group instead of unchecking it"
                )
            await self.page.set_checked(element.id, bool(arguments["checked"]))
            self._elements = None
            return f"[{element.id}] is now {'checked' if arguments['checked'] else 'unchecked'}"
        if call.name == "scroll":
            step = max(1, self.viewport // 2)
            self._offset = max(0, self._offset + (step if arguments["direction"] == "down" else -step))
            await self.page.scroll(100 if arguments["direction"] == "down" else -100)
            self._elements = None
            return f"scrolled {arguments['direction']}"
        if call.name == "click_at":
            await self.page.click_at(arguments["x"], arguments["y"])
            self._elements = None
            return f"clicked at ({arguments['x']:g}, {arguments['y']:g})"
        if call.name == "drag":
            await self.page.drag(arguments["from_x"], arguments["from_y"], arguments["to_x"], arguments["to_y"])
            self._elements = None
            return (
                f"dragged from ({arguments['from_x']:g}, {arguments['from_y']:g}) "
                f"to ({arguments['to_x']:g}, {arguments['to_y']:g})"
            )
        if call.name == "press_key":
            await self.page.press(arguments["key"])
            self._elements = None
            return f"pressed {arguments['key']}"
        raise ActionError(f"unknown tool {call.name!r}")  # pragma: no cover - validated above

    # -- reference solutions ---------------------------------------------------------

    async def oracle_action(self) -> dict[str, Any]:
        """The next tool call of the task's scripted solution (read from the current page)."""
        from ._miniwob_oracle import next_call

        call = await next_call(self)
        if call is None:
            return {"role": "assistant", "content": "Done."}
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call_0", "name": call[0], "arguments": call[1]}],
        }

    def null_action(self) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    async def close(self) -> None:
        """End the episode and release the browser context. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._active = False
        await self.page.close()
