"""The page model: what a site serves, independent of how it is displayed.

A :class:`Page` is a URL, a title and a tree of :class:`Element` s. The HTTP server
renders it to HTML for Chromium; the ``dom`` backend uses it directly. Both backends
report what the page looks like *now* as a :class:`Snapshot` (current values, checked
boxes, selected options), which :func:`format_snapshot` turns into the
accessibility-tree text the agent reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ELEMENT_KINDS",
    "short_url",
    "INTERACTIVE_KINDS",
    "Element",
    "Page",
    "Snapshot",
    "SnapshotElement",
    "format_snapshot",
    "normalise_text",
]

ELEMENT_KINDS = ("heading", "text", "link", "button", "textbox", "select", "checkbox", "form", "image", "hidden")
INTERACTIVE_KINDS = frozenset({"link", "button", "textbox", "select", "checkbox"})


def normalise_text(text: str) -> str:
    """Collapse runs of whitespace, as a browser's layout does."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Element:
    """One element of a page.

    Attributes:
        id: unique within the page; the agent names elements by it.
        kind: one of :data:`ELEMENT_KINDS`.
        label: visible text (links, buttons, headings, text) or accessible name (inputs).
        name: the form field name (inputs, selects, checkboxes, submit buttons).
        value: initial value (textboxes, selects: the option value; buttons: submitted value).
        href: link target (site-relative path) or a button's navigation target.
        options: ``(value, label)`` pairs of a select.
        checked: initial state of a checkbox.
        input_type: ``text``, ``email``, ``number``, ``password``, ``search`` or ``textarea``.
        placeholder: a textbox's placeholder.
        action: a form's target path; method: ``get`` or ``post``.
        src: an image's source URL.
        level: a heading's level (1-6).
        children: a form's elements.
    """

    id: str
    kind: str
    label: str = ""
    name: str = ""
    value: str = ""
    href: str = ""
    options: tuple[tuple[str, str], ...] = ()
    checked: bool = False
    input_type: str = "text"
    placeholder: str = ""
    action: str = ""
    method: str = "post"
    src: str = ""
    level: int = 2
    children: tuple[Element, ...] = ()

    def walk(self, depth: int = 0) -> list[tuple[Element, int]]:
        """This element and its descendants with their nesting depth, in document order."""
        found = [(self, depth)]
        for child in self.children:
            found.extend(child.walk(depth + 1))
        return found


@dataclass(frozen=True)
class Page:
    """A page as the site serves it."""

    url: str
    title: str
    elements: tuple[Element, ...] = ()
    _index: dict[str, tuple[Element, int, Element | None]] = field(default_factory=dict, compare=False, repr=False)
    _ordered: tuple[tuple[Element, int], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        index: dict[str, tuple[Element, int, Element | None]] = {}
        for top in self.elements:
            for element, depth in top.walk():
                if element.id in index:
                    raise ValueError(
                        f"page {self.url!r}: element id {element.id!r} is used twice; ids must be unique per page"
                    )
                index[element.id] = (element, depth, None)
            if top.kind == "form":
                for element, depth in top.walk():
                    if element is not top:
                        index[element.id] = (element, depth, top)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_ordered", tuple(pair for top in self.elements for pair in top.walk()))

    def find(self, element_id: str) -> Element | None:
        """The element with ``element_id`` (None when absent)."""
        entry = self._index.get(element_id)
        return None if entry is None else entry[0]

    def form_of(self, element_id: str) -> Element | None:
        """The form that contains ``element_id`` (None when it is outside any form)."""
        entry = self._index.get(element_id)
        return None if entry is None else entry[2]

    def ordered(self) -> list[tuple[Element, int]]:
        """Every element with its depth, in document order."""
        return list(self._ordered)


@dataclass(frozen=True)
class SnapshotElement:
    """An element as displayed now (the same on every backend)."""

    id: str
    kind: str
    label: str
    depth: int
    value: str = ""
    checked: bool = False
    href: str = ""
    options: tuple[tuple[str, str], ...] = ()
    placeholder: str = ""
    input_type: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "depth": self.depth,
            "value": self.value,
            "checked": self.checked,
            "href": self.href,
            "options": [list(option) for option in self.options],
            "placeholder": self.placeholder,
            "input_type": self.input_type,
        }


@dataclass(frozen=True)
class Snapshot:
    """The current page: site-relative URL, title and displayed elements."""

    url: str
    title: str
    elements: tuple[SnapshotElement, ...]

    def find(self, element_id: str) -> SnapshotElement | None:
        for element in self.elements:
            if element.id == element_id:
                return element
        return None


def _quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def _line(element: SnapshotElement) -> str:
    indent = "  " * element.depth
    kind, label = element.kind, _quote(element.label)
    if kind == "heading":
        return f"{indent}heading {label}"
    if kind == "text":
        return f"{indent}text {label}"
    if kind == "image":
        return f"{indent}image {label}"
    if kind == "form":
        return f"{indent}form {label}" if element.label else f"{indent}form"
    prefix = f"{indent}[{element.id}] "
    if kind == "link":
        return f"{prefix}link {label} -> {element.href}"
    if kind == "button":
        return f"{prefix}button {label}"
    if kind == "textbox":
        extra = f" placeholder={_quote(element.placeholder)}" if element.placeholder and not element.value else ""
        kind_note = (
            " (number)"
            if element.input_type == "number"
            else " (multi-line)"
            if element.input_type == "textarea"
            else ""
        )
        return f"{prefix}textbox {label}{kind_note} value={_quote(element.value)}{extra}"
    if kind == "checkbox":
        return f"{prefix}checkbox {label} checked={'true' if element.checked else 'false'}"
    if kind == "select":
        chosen = next(
            (option_label for value, option_label in element.options if value == element.value), element.value
        )
        choices = ", ".join(_quote(option_label) for _, option_label in element.options)
        return f"{prefix}combobox {label} selected={_quote(chosen)} options=[{choices}]"
    return f"{prefix}{kind} {label}"


def short_url(url: str, limit: int = 300) -> str:
    """``url`` for display: a very long one (a long search) is cut with its length noted."""
    return url if len(url) <= limit else f"{url[:limit]}... ({len(url)} characters)"


def format_snapshot(snapshot: Snapshot, *, offset: int = 0, viewport: int = 60) -> tuple[str, int]:
    """The accessibility-tree text of ``snapshot``, showing ``viewport`` lines from ``offset``.

    Returns the text and the offset actually used (clamped to the page).
    """
    lines = [_line(element) for element in snapshot.elements if element.kind != "hidden"]
    total = len(lines)
    offset = max(0, min(offset, max(0, total - viewport)))
    shown = lines[offset : offset + viewport]
    header = [f"URL: {short_url(snapshot.url)}", f"Title: {snapshot.title}"]
    if offset > 0:
        header.append(f"({offset} lines above; scroll up to see them)")
    body = shown or ["(the page is empty)"]
    footer = []
    below = total - offset - len(shown)
    if below > 0:
        footer.append(f"({below} lines below; scroll down to see them)")
    return "\n".join(header + body + footer), offset
