"""The ``browser/shop-v0`` site: search, categories, product pages, cart, checkout, orders,
account settings and a support form, over server-side state (see ``_shop_catalog``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ._model import Element, Page
from ._shop_catalog import (
    CATEGORIES,
    COUPONS,
    GIFT_WRAP_PRICE,
    LANGUAGES,
    PRODUCTS,
    SHIPPING,
    SHOP_NAME,
    SUPPORT_TOPICS,
    Product,
    initial_shop_state,
    money,
    product,
)

__all__ = ["ShopSite", "search_products"]

_ERRORS = {
    "quantity": "Enter a whole number of at least 1.",
    "stock": "Not enough items in stock for that quantity.",
    "name": "Enter the full name for the delivery.",
    "email": "Enter a valid email address.",
    "address": "Enter the street address.",
    "city": "Enter the city.",
    "postcode": "Enter the postcode.",
    "coupon": "That coupon code is not valid.",
    "message": "Write a message for our support team.",
    "empty": "Your cart is empty.",
}


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


def _error(query: Mapping[str, str]) -> tuple[Element, ...]:
    message = _ERRORS.get(query.get("error", ""))
    return (Element("error", "text", f"Error: {message}"),) if message else ()


def _product_link(item: Product, prefix: str) -> Element:
    stock = "" if item.stock else " (out of stock)"
    return Element(
        f"{prefix}-{item.sku}", "link", f"{item.name} - {money(item.price)}{stock}", href=f"/product/{item.sku}"
    )


_MORE_THAN_ANY_STOCK = 10**18


def _cart_lines(state: Mapping[str, Any]) -> list[tuple[Product, int]]:
    lines = []
    for line in state["cart"]:
        item = product(line["sku"])
        if item is not None:
            lines.append((item, int(line["quantity"])))
    return lines


def _subtotal(state: Mapping[str, Any]) -> float:
    return round(sum(item.price * quantity for item, quantity in _cart_lines(state)), 2)


def _quantity(raw: str) -> int | None:
    """A sent quantity: ASCII digits (``int()`` refuses "²" and numbers past Python's digit limit)."""
    raw = raw.strip()
    if not (raw.isascii() and raw.isdigit()):
        return None
    return int(raw) if len(raw) <= 18 else _MORE_THAN_ANY_STOCK


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

    # -- pages ------------------------------------------------------------------------

    def render(self, path: str, query: Mapping[str, str], state: Mapping[str, Any]) -> Page | None:
        nav = _nav(state)
        if path == "/":
            return self._home(nav)
        if path == "/search":
            return self._search(nav, query.get("q", ""))
        if path.startswith("/category/"):
            return self._category(nav, path.removeprefix("/category/"), query.get("sort", "name"))
        if path.startswith("/product/"):
            return self._product(nav, path.removeprefix("/product/"), query)
        if path == "/cart":
            return self._cart(nav, state, query)
        if path == "/checkout":
            return self._checkout(nav, state, query)
        if path == "/orders":
            return self._orders(nav, state)
        if path.startswith("/orders/"):
            return self._order(nav, state, path.removeprefix("/orders/"))
        if path == "/account":
            return self._account(nav, state, query)
        if path == "/support":
            return self._support(nav, state, query)
        if path == "/support/sent":
            return self._support_sent(nav, state)
        return None

    def _home(self, nav: tuple[Element, ...]) -> Page:
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

    def _search(self, nav: tuple[Element, ...], text: str) -> Page:
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

    def _category(self, nav: tuple[Element, ...], slug: str, sort: str) -> Page | None:
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

    def _product(self, nav: tuple[Element, ...], sku: str, query: Mapping[str, str]) -> Page | None:
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

    def _cart(self, nav: tuple[Element, ...], state: Mapping[str, Any], query: Mapping[str, str]) -> Page:
        lines = _cart_lines(state)
        elements: list[Element] = [*nav, Element("cart-heading", "heading", "Your cart", level=1), *_error(query)]
        if not lines:
            elements.append(Element("cart-empty", "text", "Your cart is empty."))
        for item, quantity in lines:
            elements.append(
                Element(
                    f"line-{item.sku}",
                    "text",
                    f"{item.name} - {quantity} x {money(item.price)} = {money(item.price * quantity)}",
                )
            )
            elements.append(
                Element(
                    f"update-form-{item.sku}",
                    "form",
                    f"Change quantity of {item.name}",
                    action=f"/cart/update/{item.sku}",
                    children=(
                        Element(
                            f"qty-{item.sku}",
                            "textbox",
                            f"Quantity of {item.name}",
                            name="quantity",
                            value=str(quantity),
                            input_type="number",
                        ),
                        Element(f"update-{item.sku}", "button", "Update"),
                    ),
                )
            )
            elements.append(
                Element(
                    f"remove-form-{item.sku}",
                    "form",
                    f"Remove {item.name}",
                    action=f"/cart/remove/{item.sku}",
                    children=(Element(f"remove-{item.sku}", "button", f"Remove {item.name}"),),
                )
            )
        if lines:
            elements.append(Element("cart-subtotal", "text", f"Subtotal: {money(_subtotal(state))}"))
            elements.append(Element("checkout", "link", "Proceed to checkout", href="/checkout"))
        return Page("/cart", f"Cart - {SHOP_NAME}", tuple(elements))

    def _checkout(self, nav: tuple[Element, ...], state: Mapping[str, Any], query: Mapping[str, str]) -> Page:
        elements: list[Element] = [*nav, Element("checkout-heading", "heading", "Checkout", level=1), *_error(query)]
        lines = _cart_lines(state)
        if not lines:
            elements.append(Element("checkout-empty", "text", "Your cart is empty."))
            return Page("/checkout", f"Checkout - {SHOP_NAME}", tuple(elements))
        for item, quantity in lines:
            elements.append(Element(f"summary-{item.sku}", "text", f"{item.name} - {quantity} x {money(item.price)}"))
        elements.append(Element("summary-subtotal", "text", f"Items: {money(_subtotal(state))}"))
        account = state["account"]
        shipping = tuple((key, f"{label} - {money(price)}") for key, (label, price) in SHIPPING.items())
        elements.append(
            Element(
                "checkout-form",
                "form",
                "Delivery and payment",
                action="/checkout",
                children=(
                    Element("full-name", "textbox", "Full name", name="name", value=account["name"]),
                    Element("email", "textbox", "Email", name="email", value=account["email"], input_type="email"),
                    Element("address", "textbox", "Street address", name="address"),
                    Element("city", "textbox", "City", name="city"),
                    Element("postcode", "textbox", "Postcode", name="postcode"),
                    Element("shipping", "select", "Shipping", name="shipping", value="standard", options=shipping),
                    Element("coupon", "textbox", "Coupon code (optional)", name="coupon"),
                    Element("gift-wrap", "checkbox", f"Gift wrap (+{money(GIFT_WRAP_PRICE)})", name="gift_wrap"),
                    Element("place-order", "button", "Place order"),
                ),
            )
        )
        return Page("/checkout", f"Checkout - {SHOP_NAME}", tuple(elements))

    def _orders(self, nav: tuple[Element, ...], state: Mapping[str, Any]) -> Page:
        elements: list[Element] = [*nav, Element("orders-heading", "heading", "Your orders", level=1)]
        for order in reversed(state["orders"]):
            elements.append(
                Element(
                    f"order-{order['id']}",
                    "link",
                    f"Order {order['id']} - {order['date']} - {money(order['total'])} - {order['status']}",
                    href=f"/orders/{order['id']}",
                )
            )
        return Page("/orders", f"Orders - {SHOP_NAME}", tuple(elements))

    def _order(self, nav: tuple[Element, ...], state: Mapping[str, Any], order_id: str) -> Page | None:
        order = next((order for order in state["orders"] if order["id"] == order_id), None)
        if order is None:
            return None
        elements: list[Element] = [
            *nav,
            Element("order-heading", "heading", f"Order {order['id']}", level=1),
            Element("order-status", "text", f"Status: {order['status']}"),
            Element("order-date", "text", f"Date: {order['date']}"),
        ]
        for line in order["items"]:
            elements.append(
                Element(
                    f"item-{line['sku']}",
                    "text",
                    f"{line['name']} ({line['sku']}) - {line['quantity']} x {money(line['price'])}",
                )
            )
        elements.extend(
            (
                Element("order-subtotal", "text", f"Items: {money(order['subtotal'])}"),
                Element(
                    "order-shipping",
                    "text",
                    f"Shipping ({SHIPPING[order['shipping']][0]}): {money(order['shipping_cost'])}",
                ),
                Element("order-discount", "text", f"Discount: {money(order['discount'])}"),
                Element("order-gift-wrap", "text", f"Gift wrap: {'yes' if order['gift_wrap'] else 'no'}"),
                Element("order-total", "text", f"Total: {money(order['total'])}"),
                Element(
                    "order-address",
                    "text",
                    f"Deliver to: {order['name']}, {order['address']}, {order['city']} {order['postcode']}",
                ),
                Element("order-email", "text", f"Email: {order['email']}"),
                Element("all-orders", "link", "All orders", href="/orders"),
            )
        )
        return Page(f"/orders/{order_id}", f"Order {order_id} - {SHOP_NAME}", tuple(elements))

    def _account(self, nav: tuple[Element, ...], state: Mapping[str, Any], query: Mapping[str, str]) -> Page:
        account = state["account"]
        notice = (Element("saved", "text", "Your settings were saved."),) if query.get("saved") else ()
        form = Element(
            "account-form",
            "form",
            "Account settings",
            action="/account",
            children=(
                Element("account-name", "textbox", "Name", name="name", value=account["name"]),
                Element("account-email", "textbox", "Email", name="email", value=account["email"], input_type="email"),
                Element("account-phone", "textbox", "Phone", name="phone", value=account["phone"]),
                Element(
                    "account-language",
                    "select",
                    "Language",
                    name="language",
                    value=account["language"],
                    options=tuple(LANGUAGES.items()),
                ),
                Element(
                    "account-newsletter",
                    "checkbox",
                    "Send me the newsletter",
                    name="newsletter",
                    checked=account["newsletter"],
                ),
                Element("account-save", "button", "Save settings"),
            ),
        )
        return Page(
            "/account",
            f"Account - {SHOP_NAME}",
            (*nav, Element("account-heading", "heading", "Account settings", level=1), *notice, *_error(query), form),
        )

    def _support(self, nav: tuple[Element, ...], state: Mapping[str, Any], query: Mapping[str, str]) -> Page:
        form = Element(
            "support-form",
            "form",
            "Contact support",
            action="/support",
            children=(
                Element(
                    "support-topic",
                    "select",
                    "Topic",
                    name="topic",
                    value="order",
                    options=tuple(SUPPORT_TOPICS.items()),
                ),
                Element("support-order", "textbox", "Order number (optional)", name="order_id"),
                Element(
                    "support-email",
                    "textbox",
                    "Your email",
                    name="email",
                    value=state["account"]["email"],
                    input_type="email",
                ),
                Element("support-message", "textbox", "Message", name="message", input_type="textarea"),
                Element("support-send", "button", "Send"),
            ),
        )
        return Page(
            "/support",
            f"Support - {SHOP_NAME}",
            (*nav, Element("support-heading", "heading", "Contact support", level=1), *_error(query), form),
        )

    def _support_sent(self, nav: tuple[Element, ...], state: Mapping[str, Any]) -> Page:
        ticket = state["tickets"][-1]["id"] if state["tickets"] else None
        text = f"Thank you. Your request {ticket} was sent." if ticket else "No request was sent yet."
        return Page(
            "/support/sent",
            f"Support - {SHOP_NAME}",
            (*nav, Element("sent-heading", "heading", "Request sent", level=1), Element("sent-text", "text", text)),
        )

    # -- forms --------------------------------------------------------------------------

    def submit(self, path: str, fields: list[tuple[str, str]], state: dict[str, Any]) -> str | None:
        sent = {name: value.replace("\r\n", "\n") for name, value in fields}
        if path.startswith("/cart/add/"):
            return self._add(path.removeprefix("/cart/add/"), sent, state)
        if path.startswith("/cart/update/"):
            return self._update(path.removeprefix("/cart/update/"), sent, state)
        if path.startswith("/cart/remove/"):
            sku = path.removeprefix("/cart/remove/")
            state["cart"] = [line for line in state["cart"] if line["sku"] != sku]
            return "/cart"
        if path == "/checkout":
            return self._place_order(sent, state)
        if path == "/account":
            return self._save_account(sent, state)
        if path == "/support":
            return self._send_ticket(sent, state)
        return None

    def _add(self, sku: str, sent: Mapping[str, str], state: dict[str, Any]) -> str | None:
        item = product(sku)
        if item is None:
            return None
        quantity = _quantity(sent.get("quantity", ""))
        if quantity is None or quantity < 1:
            return f"/product/{sku}?error=quantity"
        line = next((line for line in state["cart"] if line["sku"] == sku), None)
        already = line["quantity"] if line else 0
        if already + quantity > item.stock:
            return f"/product/{sku}?error=stock"
        if line:
            line["quantity"] = already + quantity
        else:
            state["cart"].append({"sku": sku, "quantity": quantity})
        return "/cart"

    def _update(self, sku: str, sent: Mapping[str, str], state: dict[str, Any]) -> str | None:
        item = product(sku)
        line = next((line for line in state["cart"] if line["sku"] == sku), None)
        if item is None or line is None:
            return None
        quantity = _quantity(sent.get("quantity", ""))
        if quantity is None:
            return "/cart?error=quantity"
        if quantity > item.stock:
            return "/cart?error=stock"
        if quantity == 0:
            state["cart"].remove(line)
        else:
            line["quantity"] = quantity
        return "/cart"

    def _place_order(self, sent: Mapping[str, str], state: dict[str, Any]) -> str:
        lines = _cart_lines(state)
        if not lines:
            return "/checkout?error=empty"
        values = {key: sent.get(key, "").strip() for key in ("name", "email", "address", "city", "postcode", "coupon")}
        for key in ("name", "email", "address", "city", "postcode"):
            if not values[key] or (key == "email" and "@" not in values[key]):
                return f"/checkout?error={key}"
        coupon = values["coupon"].upper()
        if coupon and coupon not in COUPONS:
            return "/checkout?error=coupon"
        shipping = sent.get("shipping", "standard")
        if shipping not in SHIPPING:
            shipping = "standard"
        subtotal = _subtotal(state)
        discount = round(subtotal * 0.10, 2) if coupon == "SAVE10" else 0.0
        shipping_cost = 0.0 if coupon == "FREESHIP" else SHIPPING[shipping][1]
        gift_wrap = "gift_wrap" in sent
        total = round(subtotal - discount + shipping_cost + (GIFT_WRAP_PRICE if gift_wrap else 0.0), 2)
        order_id = str(max(int(order["id"]) for order in state["orders"]) + 1)
        state["orders"].append(
            {
                "id": order_id,
                "date": "2026-11-29",
                "status": "processing",
                "items": [
                    {"sku": item.sku, "name": item.name, "quantity": quantity, "price": item.price}
                    for item, quantity in lines
                ],
                "subtotal": subtotal,
                "shipping": shipping,
                "shipping_cost": shipping_cost,
                "discount": discount,
                "gift_wrap": gift_wrap,
                "coupon": coupon,
                "total": total,
                "name": values["name"],
                "email": values["email"],
                "address": values["address"],
                "city": values["city"],
                "postcode": values["postcode"],
            }
        )
        state["cart"] = []
        return f"/orders/{quote(order_id)}"

    def _save_account(self, sent: Mapping[str, str], state: dict[str, Any]) -> str:
        email = sent.get("email", "").strip()
        if not email or "@" not in email:
            return "/account?error=email"
        language = sent.get("language", "en")
        state["account"] = {
            "name": sent.get("name", "").strip(),
            "email": email,
            "phone": sent.get("phone", "").strip(),
            "language": language if language in LANGUAGES else "en",
            "newsletter": "newsletter" in sent,
        }
        return "/account?saved=1"

    def _send_ticket(self, sent: Mapping[str, str], state: dict[str, Any]) -> str:
        message = sent.get("message", "").strip()
        if not message:
            return "/support?error=message"
        topic = sent.get("topic", "other")
        state["tickets"].append(
            {
                "id": f"T-{len(state['tickets']) + 1}",
                "topic": topic if topic in SUPPORT_TOPICS else "other",
                "order_id": sent.get("order_id", "").strip(),
                "email": sent.get("email", "").strip(),
                "message": message,
            }
        )
        return "/support/sent"
