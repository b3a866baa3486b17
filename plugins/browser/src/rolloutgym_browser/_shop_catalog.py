"""The data of the ``browser/shop-v0`` site: products, past orders, the account, prices.

The products and the initial state (past orders, the account) are ``data/shop_catalog.json``;
the site's labels and prices are below. Fixed data (it is part of the environment's version):
changing anything here or there changes ground truth and needs a new env version.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._data_files import shop_catalog

__all__ = [
    "CATEGORIES",
    "COUPONS",
    "GIFT_WRAP_PRICE",
    "LANGUAGES",
    "PRODUCTS",
    "SHIPPING",
    "SHOP_NAME",
    "SUPPORT_TOPICS",
    "Product",
    "cart_lines",
    "initial_shop_state",
    "money",
    "product",
    "search_products",
    "cart_subtotal",
]

SHOP_NAME = "Harbor & Pine"


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    category: str
    price: float
    stock: int
    rating: float
    description: str


CATEGORIES = {"kitchen": "Kitchen", "office": "Office", "home": "Home", "outdoor": "Outdoor"}

PRODUCTS: tuple[Product, ...] = tuple(
    Product(**record.model_dump()) for record in shop_catalog().products
)  # data/shop_catalog.json (read when the shop site is first imported; `rolloutgym list` does not)

_BY_SKU = {item.sku: item for item in PRODUCTS}

SHIPPING = {
    "standard": ("Standard (3-5 days)", 4.99),
    "express": ("Express (next day)", 14.99),
    "pickup": ("Store pickup", 0.0),
}
GIFT_WRAP_PRICE = 3.00
COUPONS = {"SAVE10": "10% off the items", "FREESHIP": "free shipping"}
LANGUAGES = {"en": "English", "de": "Deutsch", "fr": "Français", "es": "Español"}
SUPPORT_TOPICS = {"order": "Order problem", "return": "Return", "product": "Product question", "other": "Other"}


def product(sku: str) -> Product | None:
    """The product with ``sku`` (None when there is none)."""
    return _BY_SKU.get(sku)


def money(value: float) -> str:
    """``12.5`` -> ``"$12.50"``."""
    return f"${value:,.2f}"


def initial_shop_state() -> dict[str, Any]:
    """The server-side state at the start of every episode (before a task's setup), a fresh copy."""
    return json.loads(_initial_state_json())


@functools.cache
def _initial_state_json() -> str:
    return json.dumps(shop_catalog().initial_state)


def search_products(query: str) -> list[Product]:
    """Products whose name, category or description contains every word of ``query``."""
    words = [word for word in re.split(r"[^a-z0-9]+", query.lower()) if word]
    if not words:
        return []
    found = []
    for item in PRODUCTS:
        haystack = f"{item.name} {CATEGORIES[item.category]} {item.description}".lower()
        if all(word in haystack for word in words):
            found.append(item)
    return found


def cart_lines(state: Mapping[str, Any]) -> list[tuple[Product, int]]:
    lines = []
    for line in state["cart"]:
        item = product(line["sku"])
        if item is not None:
            lines.append((item, int(line["quantity"])))
    return lines


def cart_subtotal(state: Mapping[str, Any]) -> float:
    return round(sum(item.price * quantity for item, quantity in cart_lines(state)), 2)
