"""The deterministic generator of the ``shop`` database (about 10,000 rows).

Seven tables: customers, products, orders, order_items, payments, shipments, returns. The
same generator version always produces the same rows (``random.Random`` with a fixed seed,
no clock, no locale); changing it changes ground truth, so bump the env versions with it.
"""

from __future__ import annotations

import datetime
import random
import sqlite3

__all__ = ["SHOP_DESCRIPTION", "SHOP_SCHEMA", "build_shop"]

SHOP_SEED = 20260501
SHOP_DESCRIPTION = (
    "The database of an online shop: customers, products, orders, order_items, payments, shipments and returns. "
    "Dates are ISO dates (YYYY-MM-DD). An order's value is the sum over its items of quantity * unit_price * "
    "(1 - discount), where a missing discount means no discount, plus its shipping_fee."
)

SHOP_SCHEMA = """
CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT,
    city TEXT NOT NULL,
    country TEXT NOT NULL,
    signup_date DATE NOT NULL,
    loyalty_tier TEXT
);
CREATE TABLE products (
    product_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    price REAL NOT NULL,
    cost REAL NOT NULL,
    stock INTEGER NOT NULL,
    discontinued INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(customer_id),
    order_date DATE NOT NULL,
    status TEXT NOT NULL,
    shipping_fee REAL NOT NULL,
    coupon_code TEXT
);
CREATE TABLE order_items (
    order_item_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(order_id),
    product_id INTEGER NOT NULL REFERENCES products(product_id),
    quantity INTEGER NOT NULL,
    unit_price REAL NOT NULL,
    discount REAL
);
CREATE TABLE payments (
    payment_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(order_id),
    paid_date DATE NOT NULL,
    amount REAL NOT NULL,
    method TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE shipments (
    shipment_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(order_id),
    carrier TEXT NOT NULL,
    shipped_date DATE NOT NULL,
    delivered_date DATE,
    tracking_number TEXT NOT NULL
);
CREATE TABLE returns (
    return_id INTEGER PRIMARY KEY,
    order_item_id INTEGER NOT NULL REFERENCES order_items(order_item_id),
    return_date DATE NOT NULL,
    reason TEXT NOT NULL,
    refund_amount REAL
);
CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX order_items_order ON order_items(order_id);
CREATE INDEX order_items_product ON order_items(product_id);
CREATE INDEX payments_order ON payments(order_id);
CREATE INDEX shipments_order ON shipments(order_id);
CREATE INDEX returns_order_item ON returns(order_item_id);
"""

_FIRST_NAMES = (
    "Ana",
    "Ben",
    "Chloe",
    "Daniel",
    "Emma",
    "Farid",
    "Grace",
    "Hugo",
    "Ines",
    "Jonas",
    "Kira",
    "Liam",
    "Maya",
    "Noah",
    "Olivia",
    "Pedro",
    "Quinn",
    "Rosa",
    "Sami",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Yusuf",
    "Zoe",
)
_LAST_NAMES = (
    "Almeida",
    "Brown",
    "Costa",
    "Dubois",
    "Evans",
    "Fischer",
    "Garcia",
    "Hansen",
    "Ivanova",
    "Jensen",
    "Kowalski",
    "Larsen",
    "Meyer",
    "Nowak",
    "Okafor",
    "Peters",
    "Rossi",
    "Silva",
    "Tanaka",
    "Novak",
    "Weber",
    "Young",
)
_CITIES = (
    ("Lisbon", "Portugal"),
    ("Porto", "Portugal"),
    ("Madrid", "Spain"),
    ("Seville", "Spain"),
    ("Paris", "France"),
    ("Lyon", "France"),
    ("Berlin", "Germany"),
    ("Munich", "Germany"),
    ("Hamburg", "Germany"),
    ("Amsterdam", "Netherlands"),
    ("Rotterdam", "Netherlands"),
    ("Milan", "Italy"),
    ("Rome", "Italy"),
    ("Vienna", "Austria"),
    ("Warsaw", "Poland"),
    ("Copenhagen", "Denmark"),
    ("Dublin", "Ireland"),
    ("London", "United Kingdom"),
    ("Manchester", "United Kingdom"),
)
_CATEGORIES = {
    "Books": ("Novel", "Cookbook", "Atlas", "Biography", "Poetry Collection", "Guidebook"),
    "Electronics": ("Headphones", "Charger", "Speaker", "Keyboard", "Webcam", "Power Bank"),
    "Home": ("Lamp", "Cushion", "Vase", "Blanket", "Clock", "Mirror"),
    "Garden": ("Hose", "Planter", "Shears", "Seed Kit", "Watering Can", "Lantern"),
    "Toys": ("Puzzle", "Robot", "Board Game", "Kite", "Plush Bear", "Train Set"),
    "Sports": ("Yoga Mat", "Dumbbell", "Water Bottle", "Jump Rope", "Tennis Balls", "Cycling Gloves"),
    "Beauty": ("Face Cream", "Shampoo", "Lip Balm", "Perfume", "Hair Brush", "Soap Set"),
    "Grocery": ("Coffee Beans", "Green Tea", "Olive Oil", "Dark Chocolate", "Honey", "Pasta"),
}
_ADJECTIVES = ("Classic", "Deluxe", "Compact", "Eco", "Premium", "Travel", "Mini", "Pro", "Vintage", "Smart")
_PRICE_RANGES = {
    "Books": (6, 60),
    "Electronics": (15, 400),
    "Home": (8, 150),
    "Garden": (5, 120),
    "Toys": (5, 90),
    "Sports": (5, 110),
    "Beauty": (3, 80),
    "Grocery": (2, 40),
}
_CARRIERS = ("DHL", "UPS", "FedEx", "PostNL")
_METHODS = ("card", "card", "card", "paypal", "paypal", "bank_transfer", "gift_card")
_REASONS = ("damaged", "wrong item", "not as described", "changed mind", "too late")
_COUPONS = ("WELCOME10", "SPRING15", "VIP20")
_START = datetime.date(2023, 1, 1)
_END = datetime.date(2024, 12, 31)


def _day(value: datetime.date) -> str:
    return value.isoformat()


def _random_date(generator: random.Random, start: datetime.date, end: datetime.date) -> datetime.date:
    return start + datetime.timedelta(days=generator.randint(0, (end - start).days))


def build_shop(connection: sqlite3.Connection) -> None:
    """Create the shop tables in ``connection`` and fill them deterministically."""
    generator = random.Random(SHOP_SEED)
    connection.executescript(SHOP_SCHEMA)

    customers = []
    for customer_id in range(1, 501):
        first, last = generator.choice(_FIRST_NAMES), generator.choice(_LAST_NAMES)
        city, country = _CITIES[
            min(int(generator.paretovariate(1.2)) - 1, len(_CITIES) - 1)
            if generator.random() < 0.5
            else generator.randrange(len(_CITIES))
        ]
        email = None if generator.random() < 0.08 else f"{first}.{last}{customer_id}@example.com".lower()
        signup = _random_date(generator, datetime.date(2022, 1, 1), datetime.date(2024, 10, 1))
        tier_draw = generator.random()
        tier = None if tier_draw < 0.4 else "bronze" if tier_draw < 0.7 else "silver" if tier_draw < 0.9 else "gold"
        customers.append((customer_id, first, last, email, city, country, _day(signup), tier))
    connection.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?, ?)", customers)

    products = []
    used_names: set[str] = set()
    product_id = 0
    for category, nouns in _CATEGORIES.items():
        for _ in range(15):
            product_id += 1
            while True:
                name = f"{generator.choice(_ADJECTIVES)} {generator.choice(nouns)}"
                if name not in used_names:
                    break
                name = f"{name} {generator.randint(2, 9)}"
                if name not in used_names:
                    break
            used_names.add(name)
            low, high = _PRICE_RANGES[category]
            price = round(generator.uniform(low, high), 2)
            cost = round(price * generator.uniform(0.4, 0.8), 2)
            stock = 0 if generator.random() < 0.1 else generator.randint(1, 300)
            discontinued = 1 if generator.random() < 0.08 else 0
            products.append((product_id, name, category, price, cost, stock, discontinued))
    connection.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?)", products)
    prices = {row[0]: row[3] for row in products}

    # Some customers order a lot, some never (about 60 have no order at all).
    active = [row for row in customers if generator.random() > 0.12]
    weights = [generator.paretovariate(1.5) for _ in active]
    orders, items, payments, shipments, returns = [], [], [], [], []
    item_id = payment_id = shipment_id = return_id = 0
    for order_id in range(1, 2001):
        customer = generator.choices(active, weights)[0]
        signup = datetime.date.fromisoformat(customer[6])
        order_date = _random_date(generator, max(signup, _START), _END)
        age = (_END - order_date).days
        draw = generator.random()
        if age < 10:
            status = "pending" if draw < 0.5 else "paid" if draw < 0.8 else "shipped"
        elif age < 30:
            status = "paid" if draw < 0.1 else "shipped" if draw < 0.5 else "delivered" if draw < 0.93 else "cancelled"
        else:
            status = "delivered" if draw < 0.84 else "shipped" if draw < 0.88 else "cancelled"
        coupon = generator.choice(_COUPONS) if generator.random() < 0.2 else None
        subtotal = 0.0
        order_items = []
        for product in generator.sample(range(1, product_id + 1), generator.choice((1, 1, 2, 2, 2, 3, 3, 4))):
            item_id += 1
            quantity = generator.choice((1, 1, 1, 2, 2, 3, 5))
            unit_price = prices[product] if generator.random() < 0.85 else round(prices[product] * 0.9, 2)
            discount = None if generator.random() < 0.75 else generator.choice((0.05, 0.1, 0.15, 0.2))
            subtotal += quantity * unit_price * (1 - (discount or 0))
            order_items.append((item_id, order_id, product, quantity, unit_price, discount))
        fee = 0.0 if subtotal >= 100 else 4.99
        orders.append((order_id, customer[0], _day(order_date), status, fee, coupon))
        items.extend(order_items)
        total = round(subtotal + fee, 2)
        method = generator.choice(_METHODS)
        if status in ("paid", "shipped", "delivered"):
            paid = order_date + datetime.timedelta(days=generator.choice((0, 0, 1, 2)))
            if generator.random() < 0.06:
                payment_id += 1
                payments.append((payment_id, order_id, _day(paid), total, generator.choice(_METHODS), "failed"))
            payment_id += 1
            payments.append((payment_id, order_id, _day(paid), total, method, "completed"))
        elif status == "cancelled" and generator.random() < 0.5:
            payment_id += 1
            payments.append((payment_id, order_id, _day(order_date), total, method, "refunded"))
        if status in ("shipped", "delivered"):
            shipped = order_date + datetime.timedelta(days=generator.randint(1, 6))
            delivered = shipped + datetime.timedelta(days=generator.randint(1, 9)) if status == "delivered" else None
            carrier = generator.choice(_CARRIERS)
            shipment_id += 1
            shipments.append(
                (
                    shipment_id,
                    order_id,
                    carrier,
                    _day(shipped),
                    delivered and _day(delivered),
                    f"{carrier[:2].upper()}{shipment_id:08d}",
                )
            )
            if delivered is not None:
                for item in order_items:
                    if generator.random() < 0.045:
                        return_id += 1
                        value = round(item[3] * item[4] * (1 - (item[5] or 0)), 2)
                        refund = None if generator.random() < 0.2 else value
                        returned = delivered + datetime.timedelta(days=generator.randint(1, 30))
                        returns.append((return_id, item[0], _day(returned), generator.choice(_REASONS), refund))
    connection.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)", orders)
    connection.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?, ?, ?)", items)
    connection.executemany("INSERT INTO payments VALUES (?, ?, ?, ?, ?, ?)", payments)
    connection.executemany("INSERT INTO shipments VALUES (?, ?, ?, ?, ?, ?)", shipments)
    connection.executemany("INSERT INTO returns VALUES (?, ?, ?, ?, ?)", returns)
