"""The rollout SDK ``browser`` config read and checked into a
:class:`~rolloutgym_browser._template_site.TemplateSite`.

The SDK leaves the element schema free-form; this module defines the one we run::

    {"initialUrl": "https://acme.test/",
     "pages": [{"url": "/", "title": "Home", "elements": [
         {"type": "heading", "text": "Welcome"},
         {"type": "link", "text": "Contact us", "href": "/contact"},
         {"type": "form", "id": "contact", "action": "/contact", "elements": [
             {"type": "input", "name": "email", "label": "Email"},
             {"type": "select", "name": "topic", "label": "Topic", "options": ["Sales", "Support"]},
             {"type": "checkbox", "name": "subscribe", "label": "Subscribe"},
             {"type": "textarea", "name": "message", "label": "Message"},
             {"type": "button", "text": "Send"}]}]}]}

Element ``type`` (alias ``kind``): ``heading``, ``text`` (alias ``paragraph``), ``link``,
``button``, ``input`` (aliases ``textbox``, ``email``, ``password``, ``number``,
``search``), ``textarea``, ``select``, ``checkbox``, ``form``, ``image``, ``hidden``.
Text comes from ``text`` (aliases ``label``, ``content``); a form's children from
``elements`` (aliases ``children``, ``fields``). URLs may be absolute on the site's
host (that of ``initialUrl``) or site-relative. A form without a button gets a "Submit"
button. Submitting records ``{"form", "page", "fields"}`` in the site's
``submissions`` state and shows a confirmation page (or the form's ``redirect``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from rolloutgym_protocol.errors import EnvFileError

from ._model import Element, Page, normalise_text
from ._template_site import FORM_FIELD, TemplateSite

__all__ = ["parse_browser_config"]

_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_KINDS = {
    "heading": "heading",
    "h1": "heading",
    "h2": "heading",
    "h3": "heading",
    "title": "heading",
    "text": "text",
    "paragraph": "text",
    "p": "text",
    "label": "text",
    "link": "link",
    "a": "link",
    "button": "button",
    "submit": "button",
    "input": "textbox",
    "textbox": "textbox",
    "text_input": "textbox",
    "email": "textbox",
    "password": "textbox",
    "number": "textbox",
    "search": "textbox",
    "tel": "textbox",
    "url": "textbox",
    "textarea": "textbox",
    "select": "select",
    "dropdown": "select",
    "combobox": "select",
    "checkbox": "checkbox",
    "form": "form",
    "image": "image",
    "img": "image",
    "hidden": "hidden",
}
_INPUT_TYPES = {"email", "password", "number", "search", "tel", "url", "textarea"}


def _first(raw: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if name in raw and raw[name] is not None:
            return raw[name]
    return default


def _element_type(raw: Any, where: str) -> str:
    """The element's declared type (``type`` or ``kind``), lower-cased; one of ``_KINDS``."""
    if not isinstance(raw, Mapping):
        raise EnvFileError(
            f"{where}: an element must be an object like {{'type': 'link', 'text': 'Home', 'href': '/'}}, got "
            f"{type(raw).__name__}"
        )
    declared = _first(raw, "type", "kind")
    if not isinstance(declared, str) or declared.lower() not in _KINDS:
        from rolloutgym_protocol.errors import did_you_mean

        hint = did_you_mean(str(declared), list(_KINDS)) if isinstance(declared, str) else ""
        raise EnvFileError(
            f"{where}.type: unknown element type {declared!r}.{hint} Use one of: heading, text, link, button, "
            "input, textarea, select, checkbox, form, image, hidden"
        )
    return declared.lower()


class _Builder:
    """Builds one page's elements, assigning ids and checking them."""

    def __init__(self, where: str, host: str | None) -> None:
        self.where = where
        self.host = host
        self.used: set[str] = set()
        self.counter = 0

    def site_url(self, url: str, where: str) -> str:
        return site_path(url, self.host, where)

    def local_url(self, url: str, where: str) -> str:
        """A URL that must stay on the site (form actions, button targets)."""
        path = self.site_url(url, where)
        if not path.startswith("/"):
            raise EnvFileError(
                f"{where}: {url!r} leaves the site; form actions and buttons must point at a page of this site"
            )
        return path

    def new_id(self, raw: Mapping[str, Any], where: str, preferred: str | None) -> str:
        explicit = raw.get("id")
        if explicit is not None:
            if not isinstance(explicit, str) or not _ID.match(explicit):
                raise EnvFileError(
                    f"{where}.id: {explicit!r} is not a valid element id; use letters, digits, '_', '-', '.' or ':'"
                )
            if explicit in self.used:
                raise EnvFileError(f"{where}.id: {explicit!r} is used twice on this page; ids must be unique per page")
            self.used.add(explicit)
            return explicit
        if preferred and _ID.match(preferred) and preferred not in self.used:
            self.used.add(preferred)
            return preferred
        while True:
            self.counter += 1
            candidate = f"e{self.counter}"
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate

    def element(self, raw: Any, where: str, *, in_form: bool) -> Element:
        declared = _element_type(raw, where)
        kind = _KINDS[declared]
        text = _first(raw, "text", "label", "content", "title", default="")
        if not isinstance(text, (str, int, float)):
            raise EnvFileError(f"{where}.text: must be a string")
        label = normalise_text(str(text))
        name = _first(raw, "name", default="")
        if not isinstance(name, str):
            raise EnvFileError(f"{where}.name: must be a string")
        if kind == "form":
            if in_form:
                raise EnvFileError(f"{where}: forms cannot contain forms")
            return self.form(raw, where, label)
        if kind in ("textbox", "select", "checkbox", "hidden") and not name:
            name = str(raw.get("id") or "") or re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
            if not name:
                raise EnvFileError(f"{where}: a {declared} needs a 'name' (the form field it fills)")
        element_id = self.new_id(raw, where, name or None)
        value = raw.get("value", "")
        if kind == "select":
            options = self.options(raw.get("options"), f"{where}.options")
            value = str(value) if value not in ("", None) else options[0][0]
            if value not in {option_value for option_value, _ in options}:
                raise EnvFileError(f"{where}.value: {value!r} is not one of the options")
            return Element(element_id, "select", label, name=name, value=value, options=options)
        if kind == "link":
            href = raw.get("href") or raw.get("url")
            if not isinstance(href, str) or not href:
                raise EnvFileError(f"{where}: a link needs 'href' (a page of the site such as '/contact')")
            return Element(element_id, "link", label or href, href=self.site_url(href, f"{where}.href"))
        if kind == "button":
            href = raw.get("href") or raw.get("url")
            return Element(
                element_id,
                "button",
                label or "Submit",
                name=name,
                value=str(value),
                href=self.local_url(href, f"{where}.href") if isinstance(href, str) and href else "",
            )
        if kind == "textbox":
            input_type = (
                declared if declared in _INPUT_TYPES else str(raw.get("inputType") or raw.get("input_type") or "text")
            )
            if input_type not in _INPUT_TYPES | {"text"}:
                raise EnvFileError(
                    f"{where}.inputType: {input_type!r} is not supported; use text, {', '.join(sorted(_INPUT_TYPES))}"
                )
            placeholder = raw.get("placeholder") or ""
            return Element(
                element_id,
                "textbox",
                label or name,
                name=name,
                value=str(value),
                input_type=input_type,
                placeholder=str(placeholder),
            )
        if kind == "checkbox":
            return Element(element_id, "checkbox", label or name, name=name, checked=bool(raw.get("checked", False)))
        if kind == "hidden":
            return Element(element_id, "hidden", "", name=name, value=str(value))
        if kind == "image":
            src = raw.get("src") or ""
            return Element(element_id, "image", normalise_text(str(raw.get("alt") or label)), src=str(src))
        level = raw.get("level") or (int(declared[1]) if declared in ("h1", "h2", "h3") else 2)
        return Element(element_id, kind, label, level=int(level))

    def options(self, raw: Any, where: str) -> tuple[tuple[str, str], ...]:
        if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw:
            raise EnvFileError(f"{where}: a select needs a non-empty list of options (strings or {{'value', 'label'}})")
        options = []
        for index, option in enumerate(raw):
            if isinstance(option, Mapping):
                value = option.get("value", option.get("label"))
                label = option.get("label", value)
            else:
                value = label = option
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise EnvFileError(f"{where}[{index}]: an option is a string or {{'value': ..., 'label': ...}}")
            options.append((str(value), normalise_text(str(label))))
        return tuple(options)

    def form(self, raw: Mapping[str, Any], where: str, label: str) -> Element:
        form_id = self.new_id(raw, where, None)
        children_raw = _first(raw, "elements", "children", "fields", default=[])
        if not isinstance(children_raw, list):
            raise EnvFileError(f"{where}.elements: a form's elements must be a list")
        children = [
            self.element(child, f"{where}.elements[{index}]", in_form=True) for index, child in enumerate(children_raw)
        ]
        if not any(child.kind == "button" and not child.href for child in children):
            children.append(
                Element(self.new_id({}, where, f"{form_id}-submit"), "button", str(raw.get("submitLabel") or "Submit"))
            )
        children.append(Element(self.new_id({}, where, f"{form_id}-marker"), "hidden", name=FORM_FIELD, value=form_id))
        method = str(raw.get("method") or "post").lower()
        if method not in ("get", "post"):
            raise EnvFileError(f"{where}.method: use 'get' or 'post', got {method!r}")
        action = raw.get("action")
        action_path = (
            self.local_url(action, f"{where}.action") if isinstance(action, str) and action else f"/_forms/{form_id}"
        )
        return Element(form_id, "form", label, action=action_path, method=method, children=tuple(children))


def site_path(url: str, host: str | None, where: str) -> str:
    """A URL of the site as a path (``https://acme.test/a?b=1`` -> ``/a?b=1``); other hosts stay absolute."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        if parts.scheme not in ("http", "https"):
            raise EnvFileError(f"{where}: {url!r} is not an http(s) URL or a site path")
        if host is None or parts.netloc.lower() != host:
            return url  # another site (with a relative initialUrl, every absolute URL is one)
        path = parts.path or "/"
    else:
        path = parts.path if parts.path.startswith("/") else "/" + parts.path
    return path + (f"?{parts.query}" if parts.query else "")


def parse_browser_config(config: Mapping[str, Any]) -> TemplateSite:
    """Validate a ``browser`` config and build its site.

    Raises:
        EnvFileError: with the path of the problem (``config.pages[1].elements[3].href: ...``).
    """
    if not isinstance(config, Mapping):
        raise EnvFileError("config: the browser template needs a config object with 'initialUrl' and 'pages'")
    initial = config.get("initialUrl")
    if not isinstance(initial, str) or not initial:
        raise EnvFileError(
            "config.initialUrl: required, the page the episode starts on (e.g. '/' or 'https://acme.test/')"
        )
    host = urlsplit(initial).netloc.lower() or None
    pages_raw = config.get("pages")
    if not isinstance(pages_raw, list) or not pages_raw:
        raise EnvFileError("config.pages: required, a non-empty list of {'url', 'title', 'elements'}")
    pages: dict[str, Page] = {}
    forms: dict[str, tuple[Element, str, str | None]] = {}
    for index, raw in enumerate(pages_raw):
        where = f"config.pages[{index}]"
        if not isinstance(raw, Mapping):
            raise EnvFileError(f"{where}: a page is an object {{'url', 'title', 'elements'}}")
        url = raw.get("url")
        if not isinstance(url, str) or not url:
            raise EnvFileError(f"{where}.url: required")
        path = site_path(url, host, f"{where}.url")
        if "://" in path:
            if host is None:
                raise EnvFileError(
                    f"{where}.url: {url!r} is absolute but initialUrl is a path; give both as paths ('/about') or "
                    "both on one host"
                )
            raise EnvFileError(
                f"{where}.url: {url!r} is on another host than initialUrl ({host}); all pages belong to one site"
            )
        path = path.split("?", 1)[0]
        if path in pages:
            raise EnvFileError(f"{where}.url: {path!r} is defined twice")
        builder = _Builder(where, host)
        elements_raw = raw.get("elements", [])
        if not isinstance(elements_raw, list):
            raise EnvFileError(f"{where}.elements: must be a list")
        elements = tuple(
            builder.element(element, f"{where}.elements[{position}]", in_form=False)
            for position, element in enumerate(elements_raw)
        )
        page = Page(path, normalise_text(str(raw.get("title") or path)), elements)
        pages[path] = page
        for position, element in enumerate(elements):
            if element.kind == "form":
                if element.id in forms:
                    raise EnvFileError(
                        f"{where}.elements[{position}].id: form id {element.id!r} is used on two pages; form ids "
                        "must be unique in the site"
                    )
                redirect_raw = elements_raw[position].get("redirect") or elements_raw[position].get("successUrl")
                redirect = (
                    site_path(redirect_raw, host, f"{where}.elements[{position}].redirect")
                    if isinstance(redirect_raw, str)
                    else None
                )
                forms[element.id] = (element, path, redirect)
    initial_path = site_path(initial, host, "config.initialUrl")
    if initial_path.split("?", 1)[0] not in pages:
        raise EnvFileError(f"config.initialUrl: {initial!r} is not one of the pages ({', '.join(sorted(pages))})")
    initial_state = config.get("initialState") or {}
    if not isinstance(initial_state, Mapping):
        raise EnvFileError("config.initialState: must be an object")
    return TemplateSite(pages, forms, initial_path, initial_state)
