"""The data-changing tasks of ``sql/shop-ops-v0``, graded by the database diff.

The expected end state is what the gold statements produce on a fresh copy of the shop
database. ``shop-ops-011`` is a task whose right answer is to change nothing (the customer
has no pending order); the null policy passes it, so it is exempt from the null check.
"""

from __future__ import annotations

__all__ = ["NOTHING_TO_DO_TASKS", "SHOP_OPS"]

NOTHING_TO_DO_TASKS = ("shop-ops-011",)

# (id, split, difficulty, skills, instruction, gold statements)
SHOP_OPS: list[tuple[str, str, str, tuple[str, ...], str, tuple[str, ...]]] = [
    (
        "shop-ops-001",
        "train",
        "easy",
        ("update",),
        "Order 202 was cancelled by the customer. Set its status to 'cancelled'. Change nothing else.",
        ("UPDATE orders SET status = 'cancelled' WHERE order_id = 202",),
    ),
    (
        "shop-ops-002",
        "train",
        "medium",
        ("update", "subquery", "date"),
        "The orders of customer 84 that were shipped before 2024-05-01 and still have the status 'shipped' have arrived. "
        "Set the status of exactly those orders to 'delivered'. Do not change the shipments table.",
        (
            "UPDATE orders SET status = 'delivered' WHERE customer_id = 84 AND status = 'shipped' "
            "AND order_id IN (SELECT order_id FROM shipments WHERE shipped_date < '2024-05-01')",
        ),
    ),
    (
        "shop-ops-003",
        "train",
        "easy",
        ("update", "rounding"),
        "Raise the price of every product in the 'Books' category by 10%: the new price is ROUND(price * 1.1, 2).",
        ("UPDATE products SET price = ROUND(price * 1.1, 2) WHERE category = 'Books'",),
    ),
    (
        "shop-ops-004",
        "dev",
        "easy",
        ("update", "filter"),
        "Mark as discontinued (discontinued = 1) every product that is out of stock (stock of 0) and not discontinued yet.",
        ("UPDATE products SET discontinued = 1 WHERE stock = 0 AND discontinued = 0",),
    ),
    (
        "shop-ops-005",
        "train",
        "easy",
        ("insert", "null-trap"),
        "Add a new customer with customer id 501: first name 'Ada', last name 'Lovelace', email 'ada.lovelace@example.com', "
        "city 'London', country 'United Kingdom', signup date 2025-01-02, not enrolled in the loyalty program.",
        (
            "INSERT INTO customers (customer_id, first_name, last_name, email, city, country, signup_date, loyalty_tier) "
            "VALUES (501, 'Ada', 'Lovelace', 'ada.lovelace@example.com', 'London', 'United Kingdom', '2025-01-02', NULL)",
        ),
    ),
    (
        "shop-ops-006",
        "train",
        "easy",
        ("delete",),
        "Delete the failed payments of order 21. Keep its other payments.",
        ("DELETE FROM payments WHERE order_id = 21 AND status = 'failed'",),
    ),
    (
        "shop-ops-007",
        "test",
        "medium",
        ("update", "multi-step"),
        "The shipment of order 121 was delivered on 2024-12-30. Record that date as the shipment's delivered date and set "
        "the order's status to 'delivered'.",
        (
            "UPDATE shipments SET delivered_date = '2024-12-30' WHERE order_id = 121",
            "UPDATE orders SET status = 'delivered' WHERE order_id = 121",
        ),
    ),
    (
        "shop-ops-008",
        "test",
        "hard",
        ("update", "correlated-subquery", "null-trap", "rounding"),
        "Settle every pending return (one whose refund amount is missing): set its refund amount to the value of the "
        "returned order item, quantity * unit_price * (1 - discount) where a missing discount means none, rounded to 2 decimals.",
        (
            "UPDATE returns SET refund_amount = (SELECT ROUND(oi.quantity * oi.unit_price * (1 - COALESCE(oi.discount, 0)), 2) "
            "FROM order_items oi WHERE oi.order_item_id = returns.order_item_id) WHERE refund_amount IS NULL",
        ),
    ),
    (
        "shop-ops-009",
        "train",
        "hard",
        ("update", "null-trap", "correlated-subquery"),
        "Enroll in the 'silver' loyalty tier every customer who is not enrolled in the loyalty program yet and has at least "
        "5 orders with the status 'delivered'.",
        (
            "UPDATE customers SET loyalty_tier = 'silver' WHERE loyalty_tier IS NULL AND "
            "(SELECT COUNT(*) FROM orders o WHERE o.customer_id = customers.customer_id AND o.status = 'delivered') >= 5",
        ),
    ),
    (
        "shop-ops-010",
        "dev",
        "medium",
        ("update", "null-trap"),
        "The coupon 'SPRING15' has expired. Remove the coupon code (set it to NULL) from every order that used it and has "
        "not been shipped yet (status 'pending' or 'paid').",
        ("UPDATE orders SET coupon_code = NULL WHERE coupon_code = 'SPRING15' AND status IN ('pending', 'paid')",),
    ),
    (
        "shop-ops-011",
        "test",
        "medium",
        ("update", "nothing-to-do"),
        "Customer 4 asked us to cancel all of their orders that are still pending (status 'pending'). Do it.",
        ("UPDATE orders SET status = 'cancelled' WHERE customer_id = 4 AND status = 'pending'",),
    ),
    (
        "shop-ops-012",
        "train",
        "easy",
        ("update", "filter"),
        "Restock the toys: add 50 units to the stock of every product in the 'Toys' category whose stock is below 10.",
        ("UPDATE products SET stock = stock + 50 WHERE category = 'Toys' AND stock < 10",),
    ),
    (
        "shop-ops-013",
        "test",
        "medium",
        ("update", "date"),
        "Cancel every order that is still pending and was placed before 2024-12-25: set its status to 'cancelled'.",
        ("UPDATE orders SET status = 'cancelled' WHERE status = 'pending' AND order_date < '2024-12-25'",),
    ),
]
