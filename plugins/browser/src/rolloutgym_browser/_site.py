"""The site application: pages and form handling over server-side state.

A :class:`Site` says what a path shows and what a form submission does. A
:class:`SiteApp` holds one episode's server-side state and answers requests; the HTTP
server (for Chromium) and the ``dom`` backend both call :meth:`SiteApp.handle`, so the
two backends see exactly the same site and record exactly the same state.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from ._model import Element, Page

__all__ = ["Response", "Site", "SiteApp", "SiteRequest", "form_fields", "not_found_page", "split_target"]


class Site(Protocol):
    """What a site does; implementations are stateless (state is passed in)."""

    def initial_state(self, setup: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A fresh server-side state, with the task's ``setup`` applied."""
        ...

    def render(self, path: str, query: Mapping[str, str], state: Mapping[str, Any]) -> Page | None:
        """The page at ``path`` (None: 404)."""
        ...

    def submit(self, path: str, fields: list[tuple[str, str]], state: dict[str, Any]) -> str | None:
        """Handle a POST to ``path``: update ``state``, return where to redirect (None: 404)."""
        ...


@dataclass(frozen=True)
class SiteRequest:
    """One request the site answered (kept in :attr:`SiteApp.requests`)."""

    method: str
    target: str
    status: int
    document: bool = True


@dataclass(frozen=True)
class Response:
    """A page (status 200 or 404) or a redirect (status 303 with ``location``)."""

    status: int
    page: Page | None = None
    location: str | None = None


def split_target(target: str) -> tuple[str, dict[str, str]]:
    """``"/search?q=mug"`` -> ``("/search", {"q": "mug"})``."""
    parts = urlsplit(target)
    return parts.path or "/", dict(parse_qsl(parts.query, keep_blank_values=True))


def not_found_page(target: str) -> Page:
    return Page(
        target,
        "Page not found",
        (
            Element("not-found-heading", "heading", "Page not found", level=1),
            Element("not-found-text", "text", f"There is no page at {target}."),
            Element("not-found-home", "link", "Home", href="/"),
        ),
    )


def form_fields(form: Element, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Submitted form data as ``{name: value}``: checkboxes become bools, text is stripped of ``\\r``.

    Browsers send only checked boxes (as ``"on"``) and turn newlines into ``\\r\\n``;
    this makes a submission read the same whichever backend sent it.
    """
    sent: dict[str, str] = {}
    for name, value in pairs:
        sent[name] = value.replace("\r\n", "\n")
    fields: dict[str, Any] = {}
    for element, _ in form.walk():
        if element is form or not element.name:
            continue
        if element.kind == "checkbox":
            fields[element.name] = element.name in sent
        elif element.kind in ("textbox", "select", "hidden"):
            fields[element.name] = sent.get(element.name, "")
        elif element.kind == "button" and element.name in sent:
            fields[element.name] = sent[element.name]
    return fields


@dataclass
class SiteApp:
    """One episode of a site: its server-side state and the requests it answered."""

    site: Site
    setup: Mapping[str, Any] | None = None
    state: dict[str, Any] = field(default_factory=dict)
    requests: list[SiteRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.reset(self.setup)

    def reset(self, setup: Mapping[str, Any] | None = None) -> None:
        """Start a new episode with fresh state."""
        self.setup = copy.deepcopy(dict(setup)) if setup else None
        self.state = self.site.initial_state(self.setup)
        self.requests = []

    @property
    def page_errors(self) -> list[str]:
        """``"404 GET /nope"`` for every page (not image) the site could not answer."""
        return [
            f"{request.status} {request.method} {request.target}"
            for request in self.requests
            if request.status >= 400 and request.document
        ]

    def handle(
        self, method: str, target: str, pairs: Sequence[tuple[str, str]] = (), *, document: bool = True
    ) -> Response:
        """Answer ``method target`` (``pairs``: the decoded form body of a POST).

        ``document`` is False for a page's resources (images): their failures are the
        site's, not the agent's, and are not page errors.
        """
        path, query = split_target(target)
        if method == "POST":
            location = self.site.submit(path, list(pairs), self.state)
            response = Response(404, not_found_page(target)) if location is None else Response(303, location=location)
        else:
            page = self.site.render(path, query, self.state)
            response = Response(404, not_found_page(target)) if page is None else Response(200, page)
        self.requests.append(SiteRequest(method, target, response.status, document))
        return response
