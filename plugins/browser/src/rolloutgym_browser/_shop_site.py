"""The ``browser/shop-v0`` site: search, categories, product pages, cart, checkout, orders,
account settings and a support form, over server-side state (see ``_shop_catalog``); its pages
are ``_shop_pages``, its forms ``_shop_forms``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ._model import Page
from ._shop_catalog import initial_shop_state
from ._shop_forms import submit_form
from ._shop_pages import render_page

__all__ = ["ShopSite"]


class ShopSite:
    """The shop; stateless (every method takes the episode's state)."""

    def initial_state(self, setup: Mapping[str, Any] | None = None) -> dict[str, Any]:
        state = initial_shop_state()
        for key, value in (setup or {}).items():
            if key == "account":
                state["account"].update(copy.deepcopy(value))
            else:
                state[key] = copy.deepcopy(value)
        return state

    def render(self, path: str, query: Mapping[str, str], state: Mapping[str, Any]) -> Page | None:
        """The page at ``path`` (None: no such page)."""
        return render_page(path, query, state)

    def submit(self, path: str, fields: list[tuple[str, str]], state: dict[str, Any]) -> str | None:
        """Handle a form sent to ``path``; the page to redirect to (None: no such form)."""
        return submit_form(path, fields, state)
