"""The site a ``browser`` config describes, as it runs: static pages, and forms recorded in
``state["submissions"]`` followed by a confirmation page (the config is read by
:mod:`rolloutgym_browser._config`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._model import Element, Page
from ._site import form_fields

__all__ = ["CONFIRMATION_PATH", "FORM_FIELD", "TemplateSite"]


FORM_FIELD = "_rg_form"
CONFIRMATION_PATH = "/_submitted"


class TemplateSite:
    """A static site from a ``browser`` config; forms are recorded in ``state["submissions"]``."""

    def __init__(
        self,
        pages: Mapping[str, Page],
        forms: Mapping[str, tuple[Element, str, str | None]],
        initial_url: str,
        initial_state: Mapping[str, Any],
    ) -> None:
        self.pages = dict(pages)
        self.forms = dict(forms)
        self.initial_url = initial_url
        self._initial_state = dict(initial_state)

    def initial_state(self, setup: Mapping[str, Any] | None = None) -> dict[str, Any]:
        import copy

        state: dict[str, Any] = {"submissions": []}
        state.update(copy.deepcopy(self._initial_state))
        if setup:
            state.update(copy.deepcopy(dict(setup)))
        return state

    def render(self, path: str, query: Mapping[str, str], state: Mapping[str, Any]) -> Page | None:
        if path == CONFIRMATION_PATH:
            form_id = query.get("form", "")
            entry = self.forms.get(form_id)
            back = entry[1] if entry else "/"
            return Page(
                path,
                "Form submitted",
                (
                    Element("submitted-heading", "heading", "Thank you", level=1),
                    Element(
                        "submitted-text",
                        "text",
                        f"Your form '{(entry[0].label if entry else '') or form_id}' was submitted.",
                    ),
                    Element("submitted-back", "link", "Back", href=back),
                ),
            )
        return self.pages.get(path)

    def submit(self, path: str, fields: list[tuple[str, str]], state: dict[str, Any]) -> str | None:
        sent = dict(fields)
        entry = self.forms.get(sent.get(FORM_FIELD, ""))
        if entry is None or entry[0].action.split("?", 1)[0] != path:
            return None
        form, page_path, redirect = entry
        values = {name: value for name, value in form_fields(form, fields).items() if name != FORM_FIELD}
        state.setdefault("submissions", []).append({"form": form.id, "page": page_path, "fields": values})
        return redirect or f"{CONFIRMATION_PATH}?form={form.id}"

    def find_form(self, form_id: str | None, field_names: Sequence[str]) -> tuple[Element, str] | None:
        """The form with ``form_id``, else the only one that has every field in ``field_names``."""
        if form_id is not None:
            entry = self.forms.get(form_id)
            return None if entry is None else (entry[0], entry[1])
        matches = []
        for form, page_path, _ in self.forms.values():
            names = {element.name for element, _ in form.walk() if element.name}
            if set(field_names) <= names:
                matches.append((form, page_path))
        return matches[0] if len(matches) == 1 else None
