"""The data of the ``browser/shop-v0`` site: products, past orders, the account, prices.

Fixed data (it is part of the environment's version): changing anything here changes
ground truth and needs a new env version.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

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
    "initial_shop_state",
    "money",
    "product",
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

PRODUCTS: tuple[Product, ...] = (
    Product("K-101", "Enamel Coffee Mug", "kitchen", 12.50, 14, 4.6, "A white enamel mug that holds 350 ml of coffee."),
    Product("K-102", "Stoneware Tea Mug", "kitchen", 9.90, 0, 4.1, "A speckled stoneware mug for tea, 300 ml."),
    Product("K-103", "Glass Water Kettle", "kitchen", 34.00, 6, 4.3, "A 1.2 litre borosilicate kettle for the stove."),
    Product("K-104", "Steel Chef Knife", "kitchen", 48.75, 9, 4.8, "A 20 cm chef knife forged from stainless steel."),
    Product(
        "K-105", "Bamboo Cutting Board", "kitchen", 22.40, 11, 4.4, "A reversible bamboo board with a juice groove."
    ),
    Product("K-106", "Cast Iron Skillet", "kitchen", 39.95, 4, 4.7, "A pre-seasoned 26 cm skillet."),
    Product("O-201", "Walnut Desk Lamp", "office", 59.00, 5, 4.5, "A dimmable LED lamp with a walnut base."),
    Product("O-202", "Brass Desk Lamp", "office", 72.30, 2, 4.2, "A banker's lamp in brushed brass."),
    Product("O-203", "Linen Notebook", "office", 8.25, 40, 4.0, "A dotted A5 notebook bound in linen, 160 pages."),
    Product(
        "O-204",
        "Fountain Pen",
        "office",
        27.60,
        12,
        4.6,
        "A steel-nib pen with a converter; cartridges sold separately.",
    ),
    Product("O-205", "Ergonomic Mouse", "office", 31.99, 8, 3.9, "A vertical wireless mouse."),
    Product("O-206", "Monitor Stand", "office", 44.10, 0, 4.4, "An oak stand that raises a screen by 12 cm."),
    Product("H-301", "Wool Throw Blanket", "home", 64.00, 7, 4.8, "A heavy throw woven from merino wool."),
    Product("H-302", "Linen Pillow Cover", "home", 18.20, 25, 4.1, "A stonewashed linen cover, 50 x 50 cm."),
    Product("H-303", "Ceramic Vase", "home", 29.50, 3, 4.3, "A matte ceramic vase, 25 cm tall."),
    Product("H-304", "Soy Wax Candle", "home", 15.75, 30, 4.5, "A cedar-scented candle that burns for 40 hours."),
    Product("H-305", "Cotton Bath Towel", "home", 19.90, 16, 4.2, "A 70 x 140 cm towel of organic cotton."),
    Product("G-401", "Canvas Tote Bag", "outdoor", 16.40, 22, 4.4, "A sturdy tote of waxed canvas."),
    Product("G-402", "Insulated Water Bottle", "outdoor", 24.95, 18, 4.7, "Keeps drinks cold for 24 hours; 750 ml."),
    Product("G-403", "Folding Camp Chair", "outdoor", 52.80, 5, 4.0, "A light aluminium chair that folds flat."),
    Product("G-404", "Trail Picnic Blanket", "outdoor", 37.25, 0, 4.5, "A water-resistant picnic blanket."),
    Product("G-405", "Solar Lantern", "outdoor", 28.60, 9, 4.1, "A lantern that charges in daylight."),
)

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


def _past_order(
    order_id: str, date: str, status: str, lines: list[tuple[str, int]], shipping: str, address: dict[str, str]
) -> dict[str, Any]:
    items = []
    for sku, quantity in lines:
        item = _BY_SKU[sku]
        items.append({"sku": sku, "name": item.name, "quantity": quantity, "price": item.price})
    subtotal = round(sum(line["price"] * line["quantity"] for line in items), 2)
    shipping_cost = SHIPPING[shipping][1]
    return {
        "id": order_id,
        "date": date,
        "status": status,
        "items": items,
        "subtotal": subtotal,
        "shipping": shipping,
        "shipping_cost": shipping_cost,
        "discount": 0.0,
        "gift_wrap": False,
        "coupon": "",
        "total": round(subtotal + shipping_cost, 2),
        **address,
    }


_HOME = {
    "name": "Sam Rivera",
    "email": "sam.rivera@example.com",
    "address": "12 Harbor Street",
    "city": "Portland",
    "postcode": "97201",
}
_OFFICE = {
    "name": "Sam Rivera",
    "email": "sam.rivera@example.com",
    "address": "400 Pine Avenue, Suite 3",
    "city": "Portland",
    "postcode": "97204",
}


def initial_shop_state() -> dict[str, Any]:
    """The server-side state at the start of every episode (before a task's setup)."""
    return json.loads(_initial_state_json())


@functools.cache
def _initial_state_json() -> str:
    return json.dumps(
        {
            "cart": [],
            "orders": [
                _past_order("1001", "2026-09-14", "delivered", [("O-203", 2), ("O-204", 1)], "standard", _OFFICE),
                _past_order("1002", "2026-10-21", "shipped", [("K-103", 1)], "express", _HOME),
                _past_order("1003", "2026-11-20", "processing", [("H-301", 1), ("H-304", 2)], "standard", _HOME),
            ],
            "account": {
                "name": "Sam Rivera",
                "email": "sam.rivera@example.com",
                "phone": "",
                "language": "en",
                "newsletter": False,
            },
            "tickets": [],
        }
    )
