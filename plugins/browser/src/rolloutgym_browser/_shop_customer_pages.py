"""The customer's own pages of the ``browser/shop-v0`` site (cart, checkout, orders, account,
support), from the episode's server-side state, and the error messages the forms redirect with
(``?error=CODE``); the catalog's pages and the page dispatch are ``_shop_pages``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._model import Element, Page
from ._shop_catalog import (
    GIFT_WRAP_PRICE,
    LANGUAGES,
    SHIPPING,
    SHOP_NAME,
    SUPPORT_TOPICS,
    cart_lines,
    cart_subtotal,
    money,
)

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


def _error(query: Mapping[str, str]) -> tuple[Element, ...]:
    message = _ERRORS.get(query.get("error", ""))
    return (Element("error", "text", f"Error: {message}"),) if message else ()


def _cart(nav: tuple[Element, ...], state: Mapping[str, Any], query: Mapping[str, str]) -> Page:
    lines = cart_lines(state)
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
        elements.append(Element("cart-subtotal", "text", f"Subtotal: {money(cart_subtotal(state))}"))
        elements.append(Element("checkout", "link", "Proceed to checkout", href="/checkout"))
    return Page("/cart", f"Cart - {SHOP_NAME}", tuple(elements))


def _checkout(nav: tuple[Element, ...], state: Mapping[str, Any], query: Mapping[str, str]) -> Page:
    elements: list[Element] = [*nav, Element("checkout-heading", "heading", "Checkout", level=1), *_error(query)]
    lines = cart_lines(state)
    if not lines:
        elements.append(Element("checkout-empty", "text", "Your cart is empty."))
        return Page("/checkout", f"Checkout - {SHOP_NAME}", tuple(elements))
    for item, quantity in lines:
        elements.append(Element(f"summary-{item.sku}", "text", f"{item.name} - {quantity} x {money(item.price)}"))
    elements.append(Element("summary-subtotal", "text", f"Items: {money(cart_subtotal(state))}"))
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


def _orders(nav: tuple[Element, ...], state: Mapping[str, Any]) -> Page:
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


def _order(nav: tuple[Element, ...], state: Mapping[str, Any], order_id: str) -> Page | None:
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


def _account(nav: tuple[Element, ...], state: Mapping[str, Any], query: Mapping[str, str]) -> Page:
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


def _support(nav: tuple[Element, ...], state: Mapping[str, Any], query: Mapping[str, str]) -> Page:
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


def _support_sent(nav: tuple[Element, ...], state: Mapping[str, Any]) -> Page:
    ticket = state["tickets"][-1]["id"] if state["tickets"] else None
    text = f"Thank you. Your request {ticket} was sent." if ticket else "No request was sent yet."
    return Page(
        "/support/sent",
        f"Support - {SHOP_NAME}",
        (*nav, Element("sent-heading", "heading", "Request sent", level=1), Element("sent-text", "text", text)),
    )
