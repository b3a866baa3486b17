"""The forms of the ``browser/shop-v0`` site: what a POST to each path does to the episode's
server-side state, and the page it redirects to (the pages: ``_shop_pages``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ._shop_catalog import (
    COUPONS,
    GIFT_WRAP_PRICE,
    LANGUAGES,
    SHIPPING,
    SUPPORT_TOPICS,
    cart_lines,
    cart_subtotal,
    product,
)

__all__ = ["submit_form"]

_MORE_THAN_ANY_STOCK = 10**18


def _quantity(raw: str) -> int | None:
    """A sent quantity: ASCII digits (``int()`` refuses "²" and numbers past Python's digit limit)."""
    raw = raw.strip()
    if not (raw.isascii() and raw.isdigit()):
        return None
    return int(raw) if len(raw) <= 18 else _MORE_THAN_ANY_STOCK


def submit_form(path: str, fields: list[tuple[str, str]], state: dict[str, Any]) -> str | None:
    sent = {name: value.replace("\r\n", "\n") for name, value in fields}
    if path.startswith("/cart/add/"):
        return _add(path.removeprefix("/cart/add/"), sent, state)
    if path.startswith("/cart/update/"):
        return _update(path.removeprefix("/cart/update/"), sent, state)
    if path.startswith("/cart/remove/"):
        sku = path.removeprefix("/cart/remove/")
        state["cart"] = [line for line in state["cart"] if line["sku"] != sku]
        return "/cart"
    if path == "/checkout":
        return _place_order(sent, state)
    if path == "/account":
        return _save_account(sent, state)
    if path == "/support":
        return _send_ticket(sent, state)
    return None


def _add(sku: str, sent: Mapping[str, str], state: dict[str, Any]) -> str | None:
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


def _update(sku: str, sent: Mapping[str, str], state: dict[str, Any]) -> str | None:
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


def _place_order(sent: Mapping[str, str], state: dict[str, Any]) -> str:
    lines = cart_lines(state)
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
    subtotal = cart_subtotal(state)
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


def _save_account(sent: Mapping[str, str], state: dict[str, Any]) -> str:
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


def _send_ticket(sent: Mapping[str, str], state: dict[str, Any]) -> str:
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
