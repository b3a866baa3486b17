"""The browser environment: an agent uses a small website through tool calls.

Observation: the new chat messages (the first holds the system prompt and the task; then
one ``tool`` message per tool call, the last of which shows the page: URL, title and an
accessibility-tree text with element ids). Action: an assistant message with tool calls
(``click``, ``type``, ``select``, ``check``, ``goto``, ``back``, ``scroll``, ``answer``);
a message without tool calls is the final answer. Grading reads the site's server-side
state (see :mod:`rolloutgym_browser.grading`).

Backends: ``dom`` (default; pure Python) and ``chromium`` (real browser). The
environment validates every action against the current page before the backend runs
it, so both backends accept and refuse the same actions and record the same state.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from rolloutgym_protocol import AsyncEnv, AsyncForkableEnv, Score, spaces
from rolloutgym_protocol.errors import ConfigError, EnvClosedError, PolicyError
from rolloutgym_protocol.toolcalls import normalize_tool_action

from ._actions import (
    BROWSER_TOOLS,
    LIMITS,
    ActionError,
    CheckedToolCall,
    check_path,
    element_error,
    option_value,
    parse_tool_call,
    prepare_typed_text,
    shown,
)
from ._backend import Backend
from ._dispatch import dispatch_tool_calls, tool_calls_of, with_page
from ._dom_fork import browser_state, restore_browser
from ._model import Snapshot, SnapshotElement, format_snapshot, short_url
from ._site import Site, SiteApp
from ._task import BrowserTask, EpisodeOutcome, grade_with_ground_truth

__all__ = ["BACKENDS", "BrowserEnv", "make_backend"]

BACKENDS = ("dom", "chromium")
SYSTEM_PROMPT = (
    "You are using a website through tools. After every action you see the page as text: its URL, "
    "title and elements; interactive elements have an id in brackets, e.g. [search]. Use click, type, "
    "select and check on those ids, goto for a path of this site, back, and scroll when the text says "
    "there are more lines. When the task is done, call answer (or reply without a tool call) with the "
    "answer the task asks for."
)


def make_backend(backend: str | Backend, *, chromium_path: str | None = None) -> Backend:
    """A backend by name (``dom`` or ``chromium``) or the given instance."""
    if isinstance(backend, Backend):
        return backend
    if backend == "dom":
        from ._dom import DomBackend

        return DomBackend()
    if backend == "chromium":
        from ._chromium import ChromiumBackend

        return ChromiumBackend(chromium_path=chromium_path)
    raise ConfigError(
        f"unknown browser backend {backend!r}; choose one of: {', '.join(BACKENDS)} (e.g. --backend chromium)"
    )


# The longest URL path (percent-encoded) a goto may open; the site server accepts requests
# up to 1 MB, so form submissions of bounded fields always reach it on both backends.
MAX_URL_CHARS = 8000


def _is_site_path(path: str) -> bool:
    return path.startswith("/") and not path.startswith("//")


def _answer_text(content: Any) -> str:
    """A final message's text as the answer (bounded like the ``answer`` tool's)."""
    if not isinstance(content, str):
        return ""
    content = content[: LIMITS["answer"]]
    return content.encode("utf-8", "replace").decode("utf-8")  # an unpaired surrogate becomes '?'


def _canonical_path(path: str) -> str:
    """Percent-encode what browsers encode (spaces, quotes, non-ASCII), so both backends show one URL."""
    return quote(path, safe="!$&'()*+,;=:@/?%-._~") if _is_site_path(path) else path


class BrowserEnv(AsyncForkableEnv, AsyncEnv[list[dict[str, Any]], dict[str, Any]]):
    """An episode on a :class:`Site` for one :class:`BrowserTask`.

    Args:
        site: the site (pages and form handling).
        task: the task.
        backend: ``"dom"`` (default), ``"chromium"`` or a :class:`Backend`.
        screenshot: attach a PNG of the page to each page observation (``chromium`` only).
        viewport: lines of page text shown at once (``scroll`` moves by half of it).
        chromium_path: the Chromium executable (default: ``chromium`` on PATH).
        name: shown in the system prompt.
        description: shown to the agent under the system prompt (site rules, context).
        grader: ``grader(task, outcome) -> Score``; default :func:`grade_with_ground_truth`.
    """

    metadata = {"render_modes": []}
    tools = BROWSER_TOOLS

    def __init__(
        self,
        site: Site,
        task: BrowserTask,
        *,
        backend: str | Backend = "dom",
        screenshot: bool = False,
        viewport: int = 60,
        chromium_path: str | None = None,
        name: str = "a website",
        description: str | None = None,
        grader: Callable[[BrowserTask, EpisodeOutcome], Score] | None = None,
    ) -> None:
        self.site = site
        self.task = task
        self.backend = make_backend(backend, chromium_path=chromium_path)
        if screenshot and self.backend.name != "chromium":
            raise ConfigError("screenshot=True needs the chromium backend (--backend chromium)")
        if viewport < 5:
            raise ConfigError(f"viewport must show at least 5 lines, got {viewport}")
        self.screenshot = screenshot
        self.viewport = viewport
        self.name = name
        self.description = description
        self.grader = grader or grade_with_ground_truth
        self._tool_log: list[dict[str, Any]] = []
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self._app = SiteApp(site)
        self._active = False
        self._closed = False
        self._history: list[str] = []
        self._offset = 0
        self._invalid = 0
        self._oracle_index = 0
        self._refused: list[str] = []
        self._snapshot: Snapshot | None = None

    # -- episode --------------------------------------------------------------------

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        await super().reset(seed=seed, options=options)
        if self._closed:
            raise EnvClosedError("this browser environment is closed; create a new one")
        self._app.reset(copy.deepcopy(dict(self.task.setup)))
        self._active = False
        self._history = [self.task.start_url]
        self._offset = 0
        self._invalid = 0
        self._oracle_index = 0
        self._refused = []
        self._tool_log = []
        self._snapshot = None
        await self.backend.start(self._app, self.task.start_url)
        self._active = True
        page = await self._page_message_content()
        messages = [
            {
                "role": "system",
                "content": f"{SYSTEM_PROMPT}\n\nThe site: {self.name}."
                + (f"\n{self.description}" if self.description else ""),
            },
            {"role": "user", "content": with_page(f"Task: {self.task.instruction}", page)},
        ]
        return messages, self._info()

    async def _current(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = await self.backend.snapshot()
        return self._snapshot

    async def _page_message_content(self) -> str | list[dict[str, Any]]:
        snapshot = await self._current()
        text, self._offset = format_snapshot(snapshot, offset=self._offset, viewport=self.viewport)
        if not self.screenshot:
            return text
        image = await self.backend.screenshot()
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if image:
            parts.append({"type": "image", "url": "data:image/png;base64," + base64.b64encode(image).decode("ascii")})
        return parts

    def _info(self) -> dict[str, Any]:
        return {
            "task_id": self.task.id,
            "url": self._snapshot.url if self._snapshot is not None else self.task.start_url,
            "backend": self.backend.name,
            "invalid_actions": self._invalid,
            "page_errors": self._app.page_errors,
            "blocked_requests": self._refused + self.backend.blocked_requests,
        }

    async def step(
        self, action: dict[str, Any] | str
    ) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        if not self._active:
            raise RuntimeError("reset() must be called before step() and after an episode ends")
        if isinstance(action, str):
            return await self._finish([], _answer_text(action))
        action = normalize_tool_action(action)  # every accepted shape of a tool call (rolloutgym_protocol.toolcalls)
        calls = tool_calls_of(action)
        if calls is None:
            content = action.get("content") if isinstance(action, dict) else None
            return await self._finish([], _answer_text(content))
        outcome = await dispatch_tool_calls(
            calls,
            parse=parse_tool_call,
            execute=self._execute,
            answer_reply="answer recorded; the episode is over",
            log=self._tool_log,
        )
        self._invalid += outcome.invalid
        if outcome.answer is not None:
            return await self._finish(outcome.messages, outcome.answer.arguments["text"])
        last = outcome.messages[-1]
        last["content"] = with_page(last["content"], await self._page_message_content())
        return outcome.messages, 0.0, False, False, self._info()

    async def _finish(
        self, messages: list[dict[str, Any]], answer: str
    ) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        snapshot = await self._current()
        self._active = False
        info = self._info()
        state = json.loads(json.dumps(self._app.state))  # a deep copy; states are JSON
        outcome = EpisodeOutcome(
            state=state,
            answer=answer,
            final_url=snapshot.url,
            tool_calls=tuple(self._tool_log),
            invalid_actions=self._invalid,
            page_errors=tuple(info["page_errors"]),
            blocked_requests=tuple(info["blocked_requests"]),
        )
        score = self.grader(self.task, outcome)
        info["score"] = score.to_dict()
        info["state"] = json.loads(json.dumps(state))
        await self.backend.stop()
        return messages, score.value, True, False, info

    # -- actions --------------------------------------------------------------------

    def _element(self, snapshot: Snapshot, element_id: str, kinds: Sequence[str], verb: str) -> SnapshotElement:
        element = snapshot.find(element_id)
        if element is None or element.kind == "hidden":
            ids = [item.id for item in snapshot.elements if item.kind in kinds]
            raise element_error(element_id, None, ids, kinds, verb)
        if element.kind not in kinds:
            raise element_error(element_id, element.kind, (), kinds, verb)
        return element

    async def _navigated(self, before: str) -> str:
        self._snapshot = None
        self._offset = 0
        snapshot = await self._current()
        if snapshot.url != before:
            self._history.append(snapshot.url)
        return f"now on {short_url(snapshot.url)}"

    async def _execute(self, call: CheckedToolCall) -> str:
        snapshot = await self._current()
        arguments = call.arguments
        if call.name == "click":
            element = self._element(
                snapshot, arguments["element_id"], ("link", "button", "checkbox", "textbox", "select"), "click"
            )
            if element.kind == "link" and not _is_site_path(element.href):
                self._refuse(element.href)
                raise ActionError(
                    f"[{element.id}] leads to {element.href}, outside this site; only this site can be reached"
                )
            navigates = element.kind == "link" or (element.kind == "button" and element.depth > 0)
            await self.backend.click(element.id, navigates=navigates)
            if navigates:
                return f"clicked [{element.id}]; " + await self._navigated(snapshot.url)
            self._snapshot = None
            if element.kind == "checkbox":
                return f"clicked [{element.id}]; it is now {'checked' if not element.checked else 'unchecked'}"
            return f"clicked [{element.id}]"
        if call.name == "type":
            element = self._element(snapshot, arguments["element_id"], ("textbox",), "type into")
            text = prepare_typed_text(element.id, element.input_type, arguments["text"])
            await self.backend.fill(element.id, text)
            self._snapshot = None
            return f"typed into [{element.id}]"
        if call.name == "select":
            element = self._element(snapshot, arguments["element_id"], ("select",), "select in")
            wanted = arguments["option"].strip()
            value = option_value(element.id, element.options, wanted)
            await self.backend.select(element.id, value)
            self._snapshot = None
            return f"selected {wanted!r} in [{element.id}]"
        if call.name == "check":
            element = self._element(snapshot, arguments["element_id"], ("checkbox",), "check")
            await self.backend.set_checked(element.id, bool(arguments["checked"]))
            self._snapshot = None
            return f"[{element.id}] is now {'checked' if arguments['checked'] else 'unchecked'}"
        if call.name == "goto":
            path = _canonical_path(check_path(arguments["path"]))
            if not _is_site_path(path):
                if "://" in path or path.startswith("//"):
                    self._refuse(path[:200])
                raise ActionError(f"goto takes a path of this site starting with '/', e.g. '/'; got {shown(path)}")
            if len(path) > MAX_URL_CHARS:
                raise ActionError(
                    f"goto: the path is {len(path)} characters long once encoded; at most {MAX_URL_CHARS} are accepted"
                )
            await self.backend.open(path)
            return await self._navigated(snapshot.url)
        if call.name == "back":
            if len(self._history) < 2:
                raise ActionError("there is no previous page to go back to")
            self._history.pop()
            target = self._history[-1]
            await self.backend.open(target)
            self._snapshot = None
            self._offset = 0
            return f"went back; now on {short_url((await self._current()).url)}"
        if call.name == "scroll":
            step = max(1, self.viewport // 2)
            self._offset += step if arguments["direction"] == "down" else -step
            self._offset = max(0, self._offset)
            await self.backend.scroll(step if arguments["direction"] == "down" else -step)
            return f"scrolled {arguments['direction']}"
        raise ActionError(f"unknown tool {call.name!r}")  # pragma: no cover - parse_tool_call checks names

    def _refuse(self, url: str) -> None:
        """Record a request to another site that the environment refused to send."""
        self._refused.append(url)

    # -- reference solutions ---------------------------------------------------------

    def oracle_action(self) -> dict[str, Any]:
        """The next call of the task's reference solution (one tool call per step)."""
        script = self.task.oracle
        if script is None:
            raise PolicyError(
                f"browser task {self.task.id!r} has no reference solution; give its Task reference_actions "
                "(tool calls such as {'name': 'click', 'arguments': {'element_id': 'send'}})"
            )
        if self._oracle_index >= len(script):
            return {"role": "assistant", "content": "Done."}
        call = dict(script[self._oracle_index])
        self._oracle_index += 1
        tool_call = {
            "id": f"call_{self._oracle_index}",
            "name": call["name"],
            "arguments": dict(call.get("arguments", {})),
        }
        return {"role": "assistant", "content": "", "tool_calls": [tool_call]}

    def null_action(self) -> dict[str, Any]:
        return {"role": "assistant", "content": ""}

    # -- fork (AsyncForkableEnv): the site's state, the counters, the page (see _dom_fork.py) --

    @property
    def forkable(self) -> bool:  # type: ignore[override]
        return self.backend.name in ("dom", "chromium")

    @property
    def fork_note(self) -> str:
        return "" if self.forkable else f"its backend {self.backend.name!r} is neither dom nor chromium"

    async def _snapshot_state(self) -> dict[str, Any]:
        return await browser_state(self)

    async def _restore_state(self, data: dict[str, Any]) -> None:
        await restore_browser(self, data)

    async def _fork_blank(self) -> BrowserEnv:
        chromium = self.backend.name == "chromium"
        return BrowserEnv(
            self.site,
            self.task,
            backend=self.backend.name,
            screenshot=self.screenshot,
            viewport=self.viewport,
            chromium_path=getattr(self.backend, "executable_path", None) if chromium else None,
            name=self.name,
            description=self.description,
            grader=self.grader,
        )

    async def close(self) -> None:
        """End the episode and release the backend (browser context, site server). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._active = False
        await self.backend.close()
