"""The seeded world of ``workflow/refund-v0``: customers, a product catalogue and orders.

Orders are *planted*: each task asks for an order in a given situation (delivered within
the refund window, shipped, pending, ...) and the generator creates one for a customer, so
every task has exactly the order it needs. The same seed always gives the same world.
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TODAY", "WINDOW_START", "World", "build_world"]

TODAY = datetime.date(2026, 3, 15)
WINDOW_START = TODAY - datetime.timedelta(days=30)  # 2026-02-13: refunds/exchanges on or after this delivery date

_FIRST = [
    "Alice",
    "Bruno",
    "Chen",
    "Dalia",
    "Emeka",
    "Fatima",
    "Goran",
    "Hana",
    "Ivan",
    "Jamila",
    "Kenji",
    "Lucia",
    "Mateo",
    "Nadia",
]
_LAST = [
    "Moreau",
    "Okafor",
    "Lindqvist",
    "Haddad",
    "Tanaka",
    "Silva",
    "Novak",
    "Reyes",
    "Ivanova",
    "Mensah",
    "Keller",
    "Rossi",
    "Park",
    "Duarte",
]
_STREETS = [
    "Oak Street",
    "Harbor Road",
    "Linden Avenue",
    "Mill Lane",
    "Cedar Court",
    "Station Road",
    "Maple Drive",
    "Quay Street",
]
_CITIES = [
    ("Springfield", "62704"),
    ("Riverton", "82501"),
    ("Lakeside", "92040"),
    ("Fairview", "97024"),
    ("Georgetown", "78626"),
]

_CATALOG = [
    ("P-100", "Trail Running Shoe", 89.99, [("size", ["8", "9", "10", "11"]), ("color", ["blue", "black"])]),
    ("P-200", "Merino Hoodie", 74.5, [("size", ["S", "M", "L"]), ("color", ["grey", "green"])]),
    ("P-300", "Insulated Water Bottle", 24.0, [("color", ["red", "white", "black"])]),
    ("P-400", "Canvas Backpack", 59.95, [("color", ["olive", "navy"])]),
    ("P-500", "Wireless Earbuds", 129.0, [("color", ["white", "black"])]),
    ("P-600", "Yoga Mat", 35.25, [("color", ["purple", "teal"]), ("thickness", ["4mm", "6mm"])]),
    ("P-700", "Desk Lamp", 42.8, [("finish", ["brass", "matte black"])]),
    ("P-800", "Cotton T-Shirt", 19.99, [("size", ["S", "M", "L", "XL"]), ("color", ["white", "navy"])]),
]


@dataclass
class World:
    """Everything the refund environment's fixtures hold, plus generation bookkeeping."""

    customers: list[dict[str, Any]] = field(default_factory=list)
    catalog: list[dict[str, Any]] = field(default_factory=list)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    generator: random.Random = field(default_factory=lambda: random.Random(0))
    _next_order: int = 5001

    def fixtures(self) -> dict[str, Any]:
        customer_orders = [
            {
                "customer_id": customer["customer_id"],
                "order_ids": [
                    oid for oid, order in self.orders.items() if order["customer_id"] == customer["customer_id"]
                ],
            }
            for customer in self.customers
        ]
        return {
            "customers": self.customers,
            "catalog": self.catalog,
            "orders": self.orders,
            "customer_orders": customer_orders,
        }

    def variants(self, product_id: str) -> list[dict[str, Any]]:
        return next(product["variants"] for product in self.catalog if product["product_id"] == product_id)

    def plant_order(
        self,
        customer: dict[str, Any],
        status: str,
        *,
        days_since_delivery: int | None = None,
        items: int = 1,
        refunded_fraction: float = 0.0,
        product_id: str | None = None,
    ) -> dict[str, Any]:
        """Create an order for ``customer`` in ``status`` (and delivery age) and return it."""
        generator = self.generator
        order_id = f"O-{self._next_order}"
        self._next_order += 1
        products = [product for product in self.catalog if product_id is None or product["product_id"] == product_id]
        chosen_products = generator.sample(products, k=min(items, len(products))) if product_id is None else products
        lines = []
        for product in chosen_products:
            in_stock = [variant for variant in product["variants"] if variant["in_stock"]]
            variant = generator.choice(in_stock)
            quantity = 1 if product["product_id"] in ("P-500", "P-100") else generator.choice([1, 1, 2])
            lines.append(
                {
                    "sku": variant["sku"],
                    "product_id": product["product_id"],
                    "name": product["name"],
                    "options": variant["options"],
                    "quantity": quantity,
                    "unit_price": product["price"],
                }
            )
        total = round(sum(line["quantity"] * line["unit_price"] for line in lines), 2)
        placed = TODAY - datetime.timedelta(days=(days_since_delivery or 0) + generator.randint(3, 9))
        order: dict[str, Any] = {
            "order_id": order_id,
            "customer_id": customer["customer_id"],
            "status": status,
            "placed_on": placed.isoformat(),
            "delivered_on": None,
            "items": lines,
            "total_paid": total,
            "refunded_amount": round(total * refunded_fraction, 2),
            "shipping_address": dict(customer["address"]),
        }
        if status == "delivered":
            assert days_since_delivery is not None
            order["delivered_on"] = (TODAY - datetime.timedelta(days=days_since_delivery)).isoformat()
        self.orders[order_id] = order
        return order


def build_world(seed: int = 20260315, customers: int = 14) -> World:
    """Customers and the catalogue; orders are added by :meth:`World.plant_order`."""
    generator = random.Random(seed)
    world = World(generator=generator)
    for product_id, name, price, options in _CATALOG:
        variants = []
        combinations: list[dict[str, str]] = [{}]
        for option, values in options:
            combinations = [{**combo, option: value} for combo in combinations for value in values]
        for number, combo in enumerate(combinations):
            variants.append(
                {"sku": f"{product_id}-{number + 1:02d}", "options": combo, "in_stock": generator.random() > 0.3}
            )
        if all(variant["in_stock"] for variant in variants):
            variants[-1]["in_stock"] = False
        if sum(1 for variant in variants if variant["in_stock"]) < 2:
            for variant in variants[:2]:
                variant["in_stock"] = True
        world.catalog.append({"product_id": product_id, "name": name, "price": price, "variants": variants})
    for index in range(customers):
        first, last = _FIRST[index], _LAST[index]
        city, zip_code = _CITIES[index % len(_CITIES)]
        world.customers.append(
            {
                "customer_id": f"C-{1001 + index}",
                "name": f"{first} {last}",
                "email": f"{first.lower()}.{last.lower()}@example.com",
                "address": {
                    "street": f"{generator.randint(2, 180)} {generator.choice(_STREETS)}",
                    "city": city,
                    "zip": zip_code,
                },
            }
        )
    return world
