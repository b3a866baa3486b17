"""What a ``BrowserEnv`` fork copies: the site's state, the episode's counters, and the page.

On the ``dom`` backend the page is stored as the page model (elements and their form values),
not re-rendered, so a fork shows exactly the page the original showed. On ``chromium`` the page
lives in a browser process: the fork keeps its URL and the values of its form fields, opens
that URL in a fresh browser context over the copied site state and types the values back.
What the page's own scripts hold beyond its form fields (and the scroll position) is not
copied; the sites this plugin serves keep their state on the server side.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rolloutgym_protocol import from_jsonable, to_jsonable

from ._model import Element, Page
from ._site import SiteRequest

__all__ = ["browser_state", "dom_state", "restore_browser", "restore_dom"]

_FIELD_KINDS = ("textbox", "select", "checkbox")


def _element(data: dict[str, Any]) -> Element:
    fields = dict(data)
    fields["options"] = tuple((str(value), str(label)) for value, label in fields.get("options", ()))
    fields["children"] = tuple(_element(child) for child in fields.get("children", ()))
    return Element(**fields)


def dom_state_common(env: Any) -> dict[str, Any]:
    """The backend-free part of the episode: the env's counters and the site app."""
    app = env._app
    return {
        "env": {
            "active": env._active,
            "history": list(env._history),
            "offset": env._offset,
            "invalid": env._invalid,
            "oracle_index": env._oracle_index,
            "refused": list(env._refused),
            "tool_log": to_jsonable(env._tool_log),
        },
        "site": {
            "setup": to_jsonable(app.setup),
            "state": to_jsonable(app.state),
            "requests": [dataclasses.astuple(request) for request in app.requests],
        },
    }


def dom_state(env: Any) -> dict[str, Any]:
    """The episode as JSON values: the counters and the site app, the dom backend's page and form values."""
    backend = env.backend
    page = backend._page
    return {
        **dom_state_common(env),
        "page": None
        if page is None
        else {"url": page.url, "title": page.title, "elements": [dataclasses.asdict(e) for e in page.elements]},
        "browser": {
            "url": backend._url,
            "values": dict(backend._values),
            "checked": dict(backend._checked),
            "blocked": list(backend._blocked),
        },
    }


async def browser_state(env: Any) -> dict[str, Any]:
    """The episode as JSON values, for either backend."""
    if env.backend.name == "dom":
        return dom_state(env)
    state = dom_state_common(env)
    page = await env.backend.snapshot()
    fields = [
        [element.id, element.kind, element.value, element.checked]
        for element in page.elements
        if element.kind in _FIELD_KINDS
    ]
    state["chromium"] = {"url": page.url, "fields": fields, "blocked": env.backend.blocked_requests}
    return state


async def restore_browser(env: Any, data: dict[str, Any]) -> None:
    """Put ``env`` in the episode ``data`` describes (taken on the same backend)."""
    taken = "chromium" if "chromium" in data else "dom"
    if taken != env.backend.name:
        raise ValueError(f"the state was taken on the {taken} backend; this env runs {env.backend.name}")
    if taken == "dom":
        restore_dom(env, data)
        return
    page = data["chromium"]
    requests = _restore_site(env, data["site"])
    backend = env.backend
    await backend.start(env._app, str(page["url"]))
    env._app.requests = requests  # opening the page again is not one of the episode's requests
    for element_id, kind, value, checked in page["fields"]:
        if kind == "textbox":
            await backend.fill(str(element_id), str(value))
        elif kind == "select" and value:
            await backend.select(str(element_id), str(value))
        elif kind == "checkbox":
            await backend.set_checked(str(element_id), bool(checked))
    backend._blocked[:] = [str(url) for url in page["blocked"]]
    _restore_counters(env, data["env"])


def _restore_site(env: Any, site: dict[str, Any]) -> list[SiteRequest]:
    requests = [SiteRequest(str(m), str(t), int(s), bool(d)) for m, t, s, d in site["requests"]]
    state = from_jsonable(site["state"])
    if not isinstance(state, dict):
        raise TypeError("the site's state must be an object")
    env._app.setup, env._app.state, env._app.requests = from_jsonable(site["setup"]), state, list(requests)
    return requests


def _restore_counters(env: Any, counters: dict[str, Any]) -> None:
    env._active, env._history = bool(counters["active"]), [str(url) for url in counters["history"]]
    env._offset, env._invalid = int(counters["offset"]), int(counters["invalid"])
    env._oracle_index, env._refused = int(counters["oracle_index"]), [str(url) for url in counters["refused"]]
    env._tool_log = list(from_jsonable(counters["tool_log"]))
    env._snapshot = None


def restore_dom(env: Any, data: dict[str, Any]) -> None:
    """Put ``env`` (on the dom backend) in the episode ``data`` describes."""
    page_data, browser = data["page"], data["browser"]
    page = None
    if page_data is not None:
        elements = tuple(_element(element) for element in page_data["elements"])
        page = Page(str(page_data["url"]), str(page_data["title"]), elements)
    _restore_site(env, data["site"])
    backend = env.backend
    backend._app = env._app
    backend._page, backend._url, backend._snapshot = page, str(browser["url"]), None
    backend._values = {str(key): str(value) for key, value in browser["values"].items()}
    backend._checked = {str(key): bool(value) for key, value in browser["checked"].items()}
    backend._blocked = [str(url) for url in browser["blocked"]]
    _restore_counters(env, data["env"])
