"""The ``dom`` backend: a pure-Python browser over the page model.

It follows links and redirects, keeps form values, and submits forms with exactly the
fields (in document order, encoded as browsers encode them) that Chromium would send.
Deterministic and fast: no sockets, no processes.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from ._backend import Backend, BrowserError, encode_form
from ._model import Element, Page, Snapshot, SnapshotElement
from ._site import SiteApp

__all__ = ["DomBackend"]

_MAX_REDIRECTS = 10


class DomBackend(Backend):
    """Executes actions on the page model in process."""

    name = "dom"

    def __init__(self) -> None:
        self._app: SiteApp | None = None
        self._page: Page | None = None
        self._url = "/"
        self._values: dict[str, str] = {}
        self._checked: dict[str, bool] = {}
        self._snapshot: Snapshot | None = None
        self._blocked: list[str] = []

    @property
    def app(self) -> SiteApp:
        if self._app is None:
            raise BrowserError("the dom backend has no episode; call reset() first")
        return self._app

    async def start(self, app: SiteApp, url: str) -> None:
        self._app = app
        self._blocked = []
        self._load("GET", url)

    async def open(self, url: str) -> None:
        self._load("GET", url)

    def _load(self, method: str, target: str, body: str = "") -> None:
        app = self.app
        pairs = parse_qsl(body, keep_blank_values=True) if body else []
        for _ in range(_MAX_REDIRECTS):
            response = app.handle(method, target, pairs)
            if response.location is None:
                break
            method, target, pairs = "GET", response.location, []
        else:
            raise BrowserError(f"too many redirects while loading {target}")
        assert response.page is not None
        self._page, self._url = response.page, target
        self._values, self._checked = {}, {}
        for element, _ in response.page.ordered():
            if element.kind in ("textbox", "hidden"):
                self._values[element.id] = element.value
            elif element.kind == "select":
                values = [value for value, _ in element.options]
                self._values[element.id] = element.value if element.value in values else (values[0] if values else "")
            elif element.kind == "checkbox":
                self._checked[element.id] = element.checked
        self._snapshot = None
        for element, _ in response.page.ordered():
            if element.kind == "image" and element.src:
                self._load_image(element.src)

    def _load_image(self, src: str) -> None:
        """Fetch an image as a browser would: site paths from the site, other origins blocked."""
        if src.startswith("data:"):
            return
        if src.startswith("/") and not src.startswith("//"):
            self.app.handle("GET", src, document=False)
        else:
            self._blocked.append(src)

    @property
    def blocked_requests(self) -> list[str]:
        return list(self._blocked)

    def _element(self, element_id: str) -> Element:
        assert self._page is not None
        element = self._page.find(element_id)
        if element is None:
            raise BrowserError(f"element {element_id!r} is not on the page")
        return element

    async def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            assert self._page is not None
            elements = []
            for element, depth in self._page.ordered():
                elements.append(
                    SnapshotElement(
                        element.id,
                        element.kind,
                        element.label,
                        depth,
                        value=self._values.get(element.id, "") if element.kind in ("textbox", "select") else "",
                        checked=self._checked.get(element.id, False),
                        href=element.href if element.kind == "link" else "",
                        options=element.options,
                        placeholder=element.placeholder,
                        input_type=element.input_type if element.kind == "textbox" else "",
                    )
                )
            self._snapshot = Snapshot(self._url, self._page.title, tuple(elements))
        return self._snapshot

    async def click(self, element_id: str, *, navigates: bool) -> None:
        element = self._element(element_id)
        assert self._page is not None
        if element.kind == "link":
            self._load("GET", element.href)
        elif element.kind == "checkbox":
            self._checked[element_id] = not self._checked.get(element_id, False)
            self._snapshot = None
        elif element.kind == "button":
            form = self._page.form_of(element_id)
            if element.href:
                self._load("GET", element.href)
            elif form is not None:
                self._submit(form, element)

    def _submit(self, form: Element, submitter: Element) -> None:
        pairs: list[tuple[str, str]] = []
        for element, _ in form.walk():
            if element is form or not element.name:
                continue
            if element.kind in ("textbox", "hidden", "select"):
                pairs.append((element.name, self._values.get(element.id, "")))
            elif element.kind == "checkbox" and self._checked.get(element.id, False):
                pairs.append((element.name, element.value or "on"))
            elif element is submitter:
                pairs.append((element.name, element.value))
        action = form.action or self._url.split("?", 1)[0]
        if form.method == "get":
            self._load("GET", f"{action.split('?', 1)[0]}?{encode_form(pairs)}")
        else:
            self._load("POST", action, encode_form(pairs))

    async def fill(self, element_id: str, text: str) -> None:
        self._element(element_id)
        self._values[element_id] = text
        self._snapshot = None

    async def select(self, element_id: str, value: str) -> None:
        self._element(element_id)
        self._values[element_id] = value
        self._snapshot = None

    async def set_checked(self, element_id: str, checked: bool) -> None:
        self._element(element_id)
        self._checked[element_id] = checked
        self._snapshot = None

    async def stop(self) -> None:
        self._page = None
        self._snapshot = None
