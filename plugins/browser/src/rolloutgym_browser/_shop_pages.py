"""The pages of the ``browser/shop-v0`` site: what a GET of each path shows, from the episode's
server-side state (the forms that change it: ``_shop_forms``). The catalog's pages (home,
search, categories, products) are here; the customer's own (cart, checkout, orders, account,
support) are ``_shop_customer_pages``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._model import Element, Page
from ._shop_catalog import (
    CATEGORIES,
    PRODUCTS,
    SHOP_NAME,
    Product,
    money,
    product,
    search_products,
)
from ._shop_customer_pages import _account, _cart, _checkout, _error, _order, _orders, _support, _support_sent

__all__ = ["render_page"]


def _nav(state: Mapping[str, Any]) -> tuple[Element, ...]:
    count = sum(line["quantity"] for line in state["cart"])
    return (
        Element("nav-home", "link", SHOP_NAME, href="/"),
        Element("nav-cart", "link", f"Cart ({count})", href="/cart"),
        Element("nav-orders", "link", "Orders", href="/orders"),
        Element("nav-account", "link", "Account", href="/account"),
        Element("nav-support", "link", "Support", href="/support"),
    )


def _search_form(query: str = "") -> Element:
    return Element(
        "search-form",
        "form",
        "Search",
        action="/search",
        method="get",
        children=(
            Element("search-query", "textbox", "Search products", name="q", value=query, input_type="search"),
            Element("search-button", "button", "Search"),
        ),
    )


def _product_link(item: Product, prefix: str) -> Element:
    stock = "" if item.stock else " (out of stock)"
    return Element(
        f"{prefix}-{item.sku}", "link", f"{item.name} - {money(item.price)}{stock}", href=f"/product/{item.sku}"
    )


def render_page(path: str, query: Mapping[str, str], state: Mapping[str, Any]) -> Page | None:
    nav = _nav(state)
    if path == "/":
        return _home(nav)
    if path == "/search":
        return _search(nav, query.get("q", ""))
    if path.startswith("/category/"):
        return _category(nav, path.removeprefix("/category/"), query.get("sort", "name"))
    if path.startswith("/product/"):
        return _product(nav, path.removeprefix("/product/"), query)
    if path == "/cart":
        return _cart(nav, state, query)
    if path == "/checkout":
        return _checkout(nav, state, query)
    if path == "/orders":
        return _orders(nav, state)
    if path.startswith("/orders/"):
        return _order(nav, state, path.removeprefix("/orders/"))
    if path == "/account":
        return _account(nav, state, query)
    if path == "/support":
        return _support(nav, state, query)
    if path == "/support/sent":
        return _support_sent(nav, state)
    return None


def _home(nav: tuple[Element, ...]) -> Page:
    categories = tuple(
        Element(f"category-{slug}", "link", name, href=f"/category/{slug}") for slug, name in CATEGORIES.items()
    )
    return Page(
        "/",
        f"{SHOP_NAME} - Home",
        (
            *nav,
            Element("home-heading", "heading", f"Welcome to {SHOP_NAME}", level=1),
            _search_form(),
            Element("categories-heading", "heading", "Categories"),
            *categories,
        ),
    )


def _search(nav: tuple[Element, ...], text: str) -> Page:
    found = search_products(text)
    summary = (
        f'{len(found)} product{"s" if len(found) != 1 else ""} found for "{text}"'
        if text.strip()
        else "Type words to search for."
    )
    return Page(
        "/search",
        f"Search: {text} - {SHOP_NAME}",
        (
            *nav,
            _search_form(text),
            Element("results-heading", "heading", "Search results", level=1),
            Element("results-summary", "text", summary),
            *(_product_link(item, "result") for item in found),
        ),
    )


def _category(nav: tuple[Element, ...], slug: str, sort: str) -> Page | None:
    if slug not in CATEGORIES:
        return None
    items = [item for item in PRODUCTS if item.category == slug]
    orders = {
        "name": lambda item: item.name,
        "price-asc": lambda item: item.price,
        "price-desc": lambda item: -item.price,
        "rating": lambda item: -item.rating,
    }
    sort = sort if sort in orders else "name"
    items.sort(key=orders[sort])
    sort_form = Element(
        "sort-form",
        "form",
        "Sort",
        action=f"/category/{slug}",
        method="get",
        children=(
            Element(
                "sort",
                "select",
                "Sort by",
                name="sort",
                value=sort,
                options=(
                    ("name", "Name"),
                    ("price-asc", "Price: low to high"),
                    ("price-desc", "Price: high to low"),
                    ("rating", "Rating"),
                ),
            ),
            Element("sort-button", "button", "Apply"),
        ),
    )
    return Page(
        f"/category/{slug}",
        f"{CATEGORIES[slug]} - {SHOP_NAME}",
        (
            *nav,
            Element("category-heading", "heading", CATEGORIES[slug], level=1),
            sort_form,
            *(_product_link(item, "product") for item in items),
        ),
    )


def _product(nav: tuple[Element, ...], sku: str, query: Mapping[str, str]) -> Page | None:
    item = product(sku)
    if item is None:
        return None
    details = (
        Element("product-heading", "heading", item.name, level=1),
        Element("product-price", "text", f"Price: {money(item.price)}"),
        Element("product-sku", "text", f"SKU: {item.sku}"),
        Element("product-category", "text", f"Category: {CATEGORIES[item.category]}"),
        Element("product-stock", "text", f"In stock: {item.stock}" if item.stock else "Out of stock"),
        Element("product-rating", "text", f"Rating: {item.rating:.1f} out of 5"),
        Element("product-description", "text", item.description),
    )
    if item.stock:
        buy: tuple[Element, ...] = (
            Element(
                "add-form",
                "form",
                "Add to cart",
                action=f"/cart/add/{item.sku}",
                children=(
                    Element("quantity", "textbox", "Quantity", name="quantity", value="1", input_type="number"),
                    Element("add-to-cart", "button", "Add to cart"),
                ),
            ),
        )
    else:
        buy = (Element("unavailable", "text", "This product is out of stock and cannot be ordered."),)
    category = Element(
        "back-to-category", "link", f"More from {CATEGORIES[item.category]}", href=f"/category/{item.category}"
    )
    return Page(f"/product/{sku}", f"{item.name} - {SHOP_NAME}", (*nav, *_error(query), *details, *buy, category))
