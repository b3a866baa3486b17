"""The deterministic generator of the ``shop`` database (about 10,000 rows).

Seven tables: customers, products, orders, order_items, payments, shipments, returns, as
``data/shop_schema.sql`` creates them; names, cities, categories and price ranges come from
``data/shop_vocabulary.json``. The same generator version always produces the same rows
(``random.Random`` with a fixed seed, no clock, no locale); changing it or the data changes
ground truth, so bump the env versions with it.
"""

from __future__ import annotations

import datetime
import random
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ._data_files import ShopVocabulary, shop_schema, shop_vocabulary

__all__ = ["SHOP_DESCRIPTION", "build_shop"]

SHOP_SEED = 20260501
SHOP_DESCRIPTION = (
    "The database of an online shop: customers, products, orders, order_items, payments, shipments and returns. "
    "Dates are ISO dates (YYYY-MM-DD). An order's value is the sum over its items of quantity * unit_price * "
    "(1 - discount), where a missing discount means no discount, plus its shipping_fee."
)

_START = datetime.date(2023, 1, 1)
_END = datetime.date(2024, 12, 31)

Row = tuple[Any, ...]


@dataclass
class _Rows:
    """The rows of the order tables, in insertion order (ids are 1 + the rows before)."""

    orders: list[Row] = field(default_factory=list)
    items: list[Row] = field(default_factory=list)
    payments: list[Row] = field(default_factory=list)
    shipments: list[Row] = field(default_factory=list)
    returns: list[Row] = field(default_factory=list)


def _day(value: datetime.date) -> str:
    return value.isoformat()


def _random_date(generator: random.Random, start: datetime.date, end: datetime.date) -> datetime.date:
    return start + datetime.timedelta(days=generator.randint(0, (end - start).days))


def build_shop(connection: sqlite3.Connection) -> None:
    """Create the shop tables in ``connection`` and fill them deterministically."""
    generator = random.Random(SHOP_SEED)
    words = shop_vocabulary()
    connection.executescript(shop_schema())
    customers = _customers(generator, words)
    products = _products(generator, words)
    rows = _orders(generator, words, customers, products)
    connection.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?, ?)", customers)
    connection.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?)", products)
    connection.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)", rows.orders)
    connection.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?, ?, ?)", rows.items)
    connection.executemany("INSERT INTO payments VALUES (?, ?, ?, ?, ?, ?)", rows.payments)
    connection.executemany("INSERT INTO shipments VALUES (?, ?, ?, ?, ?, ?)", rows.shipments)
    connection.executemany("INSERT INTO returns VALUES (?, ?, ?, ?, ?)", rows.returns)


def _customers(generator: random.Random, words: ShopVocabulary) -> list[Row]:
    cities = words.cities
    customers = []
    for customer_id in range(1, 501):
        first, last = generator.choice(words.first_names), generator.choice(words.last_names)
        city, country = cities[
            min(int(generator.paretovariate(1.2)) - 1, len(cities) - 1)
            if generator.random() < 0.5
            else generator.randrange(len(cities))
        ]
        email = None if generator.random() < 0.08 else f"{first}.{last}{customer_id}@example.com".lower()
        signup = _random_date(generator, datetime.date(2022, 1, 1), datetime.date(2024, 10, 1))
        tier_draw = generator.random()
        tier = None if tier_draw < 0.4 else "bronze" if tier_draw < 0.7 else "silver" if tier_draw < 0.9 else "gold"
        customers.append((customer_id, first, last, email, city, country, _day(signup), tier))
    return customers


def _products(generator: random.Random, words: ShopVocabulary) -> list[Row]:
    products: list[Row] = []
    used_names: set[str] = set()
    for category, nouns in words.categories.items():
        for _ in range(15):
            while True:
                name = f"{generator.choice(words.adjectives)} {generator.choice(nouns)}"
                if name not in used_names:
                    break
                name = f"{name} {generator.randint(2, 9)}"
                if name not in used_names:
                    break
            used_names.add(name)
            low, high = words.price_ranges[category]
            price = round(generator.uniform(low, high), 2)
            cost = round(price * generator.uniform(0.4, 0.8), 2)
            stock = 0 if generator.random() < 0.1 else generator.randint(1, 300)
            discontinued = 1 if generator.random() < 0.08 else 0
            products.append((len(products) + 1, name, category, price, cost, stock, discontinued))
    return products


def _orders(generator: random.Random, words: ShopVocabulary, customers: list[Row], products: list[Row]) -> _Rows:
    prices = {row[0]: row[3] for row in products}
    # Some customers order a lot, some never (about 60 have no order at all).
    active = [row for row in customers if generator.random() > 0.12]
    weights = [generator.paretovariate(1.5) for _ in active]
    rows = _Rows()
    for order_id in range(1, 2001):
        customer = generator.choices(active, weights)[0]
        signup = datetime.date.fromisoformat(customer[6])
        order_date = _random_date(generator, max(signup, _START), _END)
        status = _status(generator, (_END - order_date).days)
        coupon = generator.choice(words.coupons) if generator.random() < 0.2 else None
        order_items, subtotal = _order_items(generator, order_id, len(rows.items), prices)
        fee = 0.0 if subtotal >= 100 else 4.99
        rows.orders.append((order_id, customer[0], _day(order_date), status, fee, coupon))
        rows.items.extend(order_items)
        _pay(generator, words, rows, (order_id, order_date, status), round(subtotal + fee, 2))
        if status in ("shipped", "delivered"):
            _ship(generator, words, rows, (order_id, order_date, status), order_items)
    return rows


def _status(generator: random.Random, age: int) -> str:
    """An order's status by its age in days (recent orders are still open)."""
    draw = generator.random()
    if age < 10:
        return "pending" if draw < 0.5 else "paid" if draw < 0.8 else "shipped"
    if age < 30:
        return "paid" if draw < 0.1 else "shipped" if draw < 0.5 else "delivered" if draw < 0.93 else "cancelled"
    return "delivered" if draw < 0.84 else "shipped" if draw < 0.88 else "cancelled"


def _order_items(
    generator: random.Random, order_id: int, items_before: int, prices: dict[int, float]
) -> tuple[list[Row], float]:
    subtotal = 0.0
    lines: list[Row] = []
    for product in generator.sample(range(1, len(prices) + 1), generator.choice((1, 1, 2, 2, 2, 3, 3, 4))):
        quantity = generator.choice((1, 1, 1, 2, 2, 3, 5))
        unit_price = prices[product] if generator.random() < 0.85 else round(prices[product] * 0.9, 2)
        discount = None if generator.random() < 0.75 else generator.choice((0.05, 0.1, 0.15, 0.2))
        subtotal += quantity * unit_price * (1 - (discount or 0))
        lines.append((items_before + len(lines) + 1, order_id, product, quantity, unit_price, discount))
    return lines, subtotal


def _pay(
    generator: random.Random, words: ShopVocabulary, rows: _Rows, order: tuple[int, datetime.date, str], total: float
) -> None:
    order_id, order_date, status = order
    method = generator.choice(words.methods)
    if status in ("paid", "shipped", "delivered"):
        paid = _day(order_date + datetime.timedelta(days=generator.choice((0, 0, 1, 2))))
        if generator.random() < 0.06:
            failed_method = generator.choice(words.methods)
            rows.payments.append((len(rows.payments) + 1, order_id, paid, total, failed_method, "failed"))
        rows.payments.append((len(rows.payments) + 1, order_id, paid, total, method, "completed"))
    elif status == "cancelled" and generator.random() < 0.5:
        rows.payments.append((len(rows.payments) + 1, order_id, _day(order_date), total, method, "refunded"))


def _ship(
    generator: random.Random,
    words: ShopVocabulary,
    rows: _Rows,
    order: tuple[int, datetime.date, str],
    order_items: list[Row],
) -> None:
    order_id, order_date, status = order
    shipped = order_date + datetime.timedelta(days=generator.randint(1, 6))
    delivered = shipped + datetime.timedelta(days=generator.randint(1, 9)) if status == "delivered" else None
    carrier = generator.choice(words.carriers)
    shipment_id = len(rows.shipments) + 1
    tracking = f"{carrier[:2].upper()}{shipment_id:08d}"
    rows.shipments.append((shipment_id, order_id, carrier, _day(shipped), delivered and _day(delivered), tracking))
    if delivered is None:
        return
    for item in order_items:
        if generator.random() < 0.045:
            value = round(item[3] * item[4] * (1 - (item[5] or 0)), 2)
            refund = None if generator.random() < 0.2 else value
            returned = delivered + datetime.timedelta(days=generator.randint(1, 30))
            reason = generator.choice(words.reasons)
            rows.returns.append((len(rows.returns) + 1, item[0], _day(returned), reason, refund))
