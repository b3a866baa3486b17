"""Render a :class:`~rolloutgym_browser._model.Page` to HTML for a real browser.

Every element carries ``data-rg`` (its id) and ``data-rgkind`` so the Chromium backend
can read back the same snapshot the ``dom`` backend builds. Pages have no scripts and no
external resources of their own; an icon link stops the browser asking for
``/favicon.ico``.
"""

from __future__ import annotations

import json
from html import escape

from ._model import Element, Page

__all__ = ["render_html"]

_STYLE = (
    "body{font-family:sans-serif;max-width:760px;margin:16px auto;line-height:1.4}"
    "form{border:1px solid #ccc;padding:8px;margin:8px 0}label{display:block;margin:4px 0}"
)


def _attributes(element: Element, **extra: str) -> str:
    pairs = {"data-rg": element.id, "data-rgkind": element.kind, **extra}
    return " ".join(f'{key}="{escape(value, quote=True)}"' for key, value in pairs.items() if value is not None)


def _render(element: Element) -> str:
    kind = element.kind
    label = escape(element.label)
    if kind == "heading":
        level = min(6, max(1, element.level))
        return f"<h{level} {_attributes(element)}>{label}</h{level}>"
    if kind == "text":
        return f"<p {_attributes(element)}>{label}</p>"
    if kind == "image":
        return f"<img {_attributes(element, src=element.src, alt=element.label)}>"
    if kind == "link":
        return f"<p><a {_attributes(element, href=element.href)}>{label}</a></p>"
    if kind == "button":
        extra = {"type": "submit"}
        if element.name:
            extra.update(name=element.name, value=element.value)
        if element.href:
            extra = {"type": "button", "onclick": f"location.href={json.dumps(element.href)}"}
        return f"<p><button {_attributes(element, **extra)}>{label}</button></p>"
    if kind == "textbox":
        common = {"name": element.name, "aria-label": element.label, "id": f"rg-{element.id}"}
        if element.placeholder:
            common["placeholder"] = element.placeholder
        if element.input_type == "textarea":
            control = f"<textarea {_attributes(element, **common)}>{escape(element.value)}</textarea>"
        else:
            control = f"<input {_attributes(element, type=element.input_type, value=element.value, **common)}>"
        return f'<label for="rg-{escape(element.id, quote=True)}">{label}</label>{control}'
    if kind == "checkbox":
        extra = {"type": "checkbox", "name": element.name, "aria-label": element.label}
        if element.value:
            extra["value"] = element.value
        checked = " checked" if element.checked else ""
        return f"<label><input {_attributes(element, **extra)}{checked}> {label}</label>"
    if kind == "select":
        options = "".join(
            f'<option value="{escape(value, quote=True)}"{" selected" if value == element.value else ""}>'
            f"{escape(option_label)}</option>"
            for value, option_label in element.options
        )
        return (
            f"<label>{label} <select "
            f"{_attributes(element, name=element.name, **{'aria-label': element.label})}>{options}</select></label>"
        )
    if kind == "hidden":
        return f"<input {_attributes(element, type='hidden', name=element.name, value=element.value)}>"
    if kind == "form":
        inner = "".join(_render(child) for child in element.children)
        attributes = _attributes(
            element, method=element.method, action=element.action, autocomplete="off", **{"aria-label": element.label}
        )
        # novalidate: the site validates on the server, as the dom backend does; the browser's own
        # checks (an email field holding "not an email") would silently block the submission.
        return f"<form {attributes} novalidate>{inner}</form>"
    raise ValueError(f"element {element.id!r} has unknown kind {kind!r}")


def render_html(page: Page) -> str:
    """The whole HTML document of ``page``."""
    body = "\n".join(_render(element) for element in page.elements)
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f'<title>{escape(page.title)}</title><link rel="icon" href="data:,"><style>{_STYLE}</style></head>'
        f"<body>\n{body}\n</body></html>"
    )
