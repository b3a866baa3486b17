"""What a ``BrowserEnv`` fork copies on the ``dom`` backend: the site's state and the page as shown.

The page is stored as the page model (elements and their form values), not re-rendered, so a
fork shows exactly the page the original showed. The ``chromium`` backend's page lives in a
browser process; such an env does not fork (a fresh env replaying the recorded actions
reaches the same state: the shop env is replayable).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rolloutgym_protocol import from_jsonable, to_jsonable

from ._model import Element, Page
from ._site import SiteRequest

__all__ = ["CHROMIUM_NOTE", "dom_state", "restore_dom"]

CHROMIUM_NOTE = (
    "the chromium backend's page lives in a browser process, which cannot be copied; fork with backend=dom, "
    "or replay the recorded actions on a fresh env (the env is replayable)"
)


def _element(data: dict[str, Any]) -> Element:
    fields = dict(data)
    fields["options"] = tuple((str(value), str(label)) for value, label in fields.get("options", ()))
    fields["children"] = tuple(_element(child) for child in fields.get("children", ()))
    return Element(**fields)


def dom_state(env: Any) -> dict[str, Any]:
    """The episode as JSON values: the env's counters, the site app, the dom backend's page and form values."""
    backend, app = env.backend, env._app
    page = backend._page
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


def restore_dom(env: Any, data: dict[str, Any]) -> None:
    """Put ``env`` (on the dom backend) in the episode ``data`` describes."""
    site, page_data, browser, counters = data["site"], data["page"], data["browser"], data["env"]
    page = None
    if page_data is not None:
        elements = tuple(_element(element) for element in page_data["elements"])
        page = Page(str(page_data["url"]), str(page_data["title"]), elements)
    requests = [SiteRequest(str(m), str(t), int(s), bool(d)) for m, t, s, d in site["requests"]]
    state = from_jsonable(site["state"])
    if not isinstance(state, dict):
        raise TypeError("the site's state must be an object")
    app, backend = env._app, env.backend
    app.setup, app.state, app.requests = from_jsonable(site["setup"]), state, requests
    backend._app = app
    backend._page, backend._url, backend._snapshot = page, str(browser["url"]), None
    backend._values = {str(key): str(value) for key, value in browser["values"].items()}
    backend._checked = {str(key): bool(value) for key, value in browser["checked"].items()}
    backend._blocked = [str(url) for url in browser["blocked"]]
    env._active, env._history = bool(counters["active"]), [str(url) for url in counters["history"]]
    env._offset, env._invalid = int(counters["offset"]), int(counters["invalid"])
    env._oracle_index, env._refused = int(counters["oracle_index"]), [str(url) for url in counters["refused"]]
    env._tool_log = list(from_jsonable(counters["tool_log"]))
    env._snapshot = None
