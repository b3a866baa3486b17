"""The questions of ``sql/shop-v0``: natural-language questions with gold SQL.

Ground truth is the gold query's result on a fresh copy of the shop database (computed at
grading time with the same backend). Where SQLite and DuckDB spell something differently
(date differences), the DuckDB gold query is given separately. Every ordered question
orders by a unique key, so the order is unambiguous. Splits are assigned here, in the data.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SHOP_QUESTIONS"]

# (id, split, difficulty, skills, instruction, gold SQL for SQLite, gold SQL for DuckDB or None)
SHOP_QUESTIONS: list[tuple[str, str, str, tuple[str, ...], str, str, str | None]] = [
    (
        "shop-001",
        "train",
        "easy",
        ("count",),
        "How many customers are there? Return one number.",
        "SELECT COUNT(*) FROM customers",
        None,
    ),
    (
        "shop-002",
        "train",
        "easy",
        ("filter", "order"),
        "List the product id and name of every product in the 'Books' category that costs more than 40, "
        "from the most to the least expensive (ties by product id, ascending).",
        "SELECT product_id, name FROM products WHERE category = 'Books' AND price > 40 ORDER BY price DESC, product_id",
        None,
    ),
    (
        "shop-003",
        "dev",
        "easy",
        ("count", "filter"),
        "How many orders have the status 'cancelled'?",
        "SELECT COUNT(*) FROM orders WHERE status = 'cancelled'",
        None,
    ),
    (
        "shop-004",
        "train",
        "easy",
        ("filter",),
        "Which customers live in Lisbon? Return their customer id, first name and last name.",
        "SELECT customer_id, first_name, last_name FROM customers WHERE city = 'Lisbon'",
        None,
    ),
    (
        "shop-005",
        "test",
        "easy",
        ("filter", "count"),
        "How many products are out of stock (stock of 0) but not discontinued?",
        "SELECT COUNT(*) FROM products WHERE stock = 0 AND discontinued = 0",
        None,
    ),
    (
        "shop-006",
        "train",
        "easy",
        ("distinct",),
        "Which payment methods have been used for at least one completed payment? One row per method.",
        "SELECT DISTINCT method FROM payments WHERE status = 'completed'",
        None,
    ),
    (
        "shop-007",
        "train",
        "easy",
        ("null-trap",),
        "How many customers have no email address on file?",
        "SELECT COUNT(*) FROM customers WHERE email IS NULL",
        None,
    ),
    (
        "shop-008",
        "test",
        "medium",
        ("null-trap",),
        "How many customers are not gold members of the loyalty program? Customers who are not enrolled in the "
        "program at all count as not gold.",
        "SELECT COUNT(*) FROM customers WHERE loyalty_tier IS NULL OR loyalty_tier <> 'gold'",
        None,
    ),
    (
        "shop-009",
        "dev",
        "easy",
        ("aggregate", "rounding"),
        "What is the average price of the products in the 'Electronics' category, rounded to 2 decimals?",
        "SELECT ROUND(AVG(price), 2) FROM products WHERE category = 'Electronics'",
        None,
    ),
    (
        "shop-010",
        "train",
        "easy",
        ("filter", "order", "limit"),
        "Return the order id and order date of the 5 most recent orders of customer 9, newest first "
        "(orders on the same day: higher order id first).",
        "SELECT order_id, order_date FROM orders WHERE customer_id = 9 ORDER BY order_date DESC, order_id DESC LIMIT 5",
        None,
    ),
    (
        "shop-011",
        "train",
        "medium",
        ("join", "group-by"),
        "For each product category, how many order items (rows of order_items) are there? Return the category and the count.",
        "SELECT p.category, COUNT(*) FROM order_items oi JOIN products p ON p.product_id = oi.product_id GROUP BY p.category",
        None,
    ),
    (
        "shop-012",
        "test",
        "medium",
        ("join", "group-by", "order"),
        "What is the total quantity sold per product category, counting only orders that were not cancelled? "
        "Return the category and the total quantity, largest total first (ties by category name).",
        "SELECT p.category, SUM(oi.quantity) AS total_quantity FROM order_items oi JOIN orders o ON o.order_id = oi.order_id "
        "JOIN products p ON p.product_id = oi.product_id WHERE o.status <> 'cancelled' GROUP BY p.category "
        "ORDER BY total_quantity DESC, p.category",
        None,
    ),
    (
        "shop-013",
        "train",
        "medium",
        ("join", "distinct"),
        "Which customers placed at least one order with the coupon code 'VIP20'? Return each such customer's first "
        "and last name once per customer (customer id included, as the first column).",
        "SELECT DISTINCT c.customer_id, c.first_name, c.last_name FROM customers c JOIN orders o ON o.customer_id = c.customer_id "
        "WHERE o.coupon_code = 'VIP20'",
        None,
    ),
    (
        "shop-014",
        "dev",
        "medium",
        ("anti-join",),
        "Which customers have never placed an order? Return their customer ids.",
        "SELECT customer_id FROM customers WHERE customer_id NOT IN (SELECT customer_id FROM orders)",
        None,
    ),
    (
        "shop-015",
        "train",
        "medium",
        ("anti-join", "count"),
        "How many products have never been ordered?",
        "SELECT COUNT(*) FROM products p WHERE NOT EXISTS (SELECT 1 FROM order_items oi WHERE oi.product_id = p.product_id)",
        None,
    ),
    (
        "shop-016",
        "train",
        "easy",
        ("aggregate", "rounding"),
        "What is the total amount of the completed payments made by card, rounded to 2 decimals?",
        "SELECT ROUND(SUM(amount), 2) FROM payments WHERE method = 'card' AND status = 'completed'",
        None,
    ),
    (
        "shop-017",
        "test",
        "hard",
        ("join", "group-by", "order", "limit", "string"),
        "Who are the 5 customers with the highest total of completed payments? Return the customer id, the full name "
        "as 'First Last' (one column) and the total rounded to 2 decimals; highest total first, ties by customer id.",
        "SELECT c.customer_id, c.first_name || ' ' || c.last_name AS full_name, ROUND(SUM(p.amount), 2) AS total "
        "FROM customers c JOIN orders o ON o.customer_id = c.customer_id JOIN payments p ON p.order_id = o.order_id "
        "WHERE p.status = 'completed' GROUP BY c.customer_id, c.first_name, c.last_name ORDER BY SUM(p.amount) DESC, c.customer_id LIMIT 5",
        None,
    ),
    (
        "shop-018",
        "dev",
        "easy",
        ("null-trap", "group-by"),
        "For each carrier, how many of its shipments have not been delivered yet (no delivered date)? Return the carrier and the count.",
        "SELECT carrier, COUNT(*) FROM shipments WHERE delivered_date IS NULL GROUP BY carrier",
        None,
    ),
    (
        "shop-019",
        "train",
        "hard",
        ("date-arithmetic", "group-by", "order"),
        "For each carrier, what is the average number of days between a shipment's shipped date and its delivered date, "
        "over delivered shipments, rounded to 1 decimal? Return the carrier and the average, sorted by carrier.",
        "SELECT carrier, ROUND(AVG(julianday(delivered_date) - julianday(shipped_date)), 1) FROM shipments "
        "WHERE delivered_date IS NOT NULL GROUP BY carrier ORDER BY carrier",
        "SELECT carrier, ROUND(AVG(delivered_date - shipped_date), 1) FROM shipments "
        "WHERE delivered_date IS NOT NULL GROUP BY carrier ORDER BY carrier",
    ),
    (
        "shop-020",
        "train",
        "medium",
        ("date", "group-by", "order"),
        "How many orders were placed in each month of 2024? Return the month as 'YYYY-MM' and the count, in chronological order.",
        "SELECT strftime('%Y-%m', order_date) AS month, COUNT(*) FROM orders "
        "WHERE order_date >= '2024-01-01' AND order_date < '2025-01-01' GROUP BY month ORDER BY month",
        None,
    ),
    (
        "shop-021",
        "test",
        "hard",
        ("null-trap", "join", "date", "rounding"),
        "What revenue did the 'Toys' category make in 2023, counting only orders that were not cancelled? Revenue is the "
        "sum of quantity * unit_price * (1 - discount), where a missing discount means no discount. Round to 2 decimals.",
        "SELECT ROUND(SUM(oi.quantity * oi.unit_price * (1 - COALESCE(oi.discount, 0))), 2) FROM order_items oi "
        "JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id "
        "WHERE p.category = 'Toys' AND o.status <> 'cancelled' AND o.order_date >= '2023-01-01' AND o.order_date < '2024-01-01'",
        None,
    ),
    (
        "shop-022",
        "dev",
        "medium",
        ("group-by", "subquery", "ties"),
        "Which order has the most order items (rows of order_items)? Return the order id and the number of items; "
        "if several orders tie for the most, return all of them.",
        "SELECT order_id, COUNT(*) AS items FROM order_items GROUP BY order_id "
        "HAVING COUNT(*) = (SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM order_items GROUP BY order_id) AS counts)",
        None,
    ),
    (
        "shop-023",
        "train",
        "hard",
        ("join", "group-by", "having"),
        "Which customers have ordered products from at least 5 different categories? Return their customer ids.",
        "SELECT o.customer_id FROM orders o JOIN order_items oi ON oi.order_id = o.order_id "
        "JOIN products p ON p.product_id = oi.product_id GROUP BY o.customer_id HAVING COUNT(DISTINCT p.category) >= 5",
        None,
    ),
    (
        "shop-024",
        "train",
        "easy",
        ("null-trap", "count"),
        "How many returns are still pending, that is, have no refund amount recorded yet?",
        "SELECT COUNT(*) FROM returns WHERE refund_amount IS NULL",
        None,
    ),
    (
        "shop-025",
        "test",
        "medium",
        ("null-trap", "group-by", "order", "rounding"),
        "What is the total refunded amount per return reason, ignoring returns that are still pending (no refund amount)? "
        "Return the reason and the total rounded to 2 decimals, largest total first (ties by reason).",
        "SELECT reason, ROUND(SUM(refund_amount), 2) AS total FROM returns WHERE refund_amount IS NOT NULL "
        "GROUP BY reason ORDER BY SUM(refund_amount) DESC, reason",
        None,
    ),
    (
        "shop-026",
        "train",
        "hard",
        ("window", "ties"),
        "What is the most expensive product of each category? Return the product id, name, category and price; if several "
        "products of a category share the highest price, return all of them.",
        "SELECT product_id, name, category, price FROM (SELECT product_id, name, category, price, "
        "RANK() OVER (PARTITION BY category ORDER BY price DESC) AS price_rank FROM products) AS ranked WHERE price_rank = 1",
        None,
    ),
    (
        "shop-027",
        "dev",
        "hard",
        ("window", "order"),
        "List the orders of customer 4 with their order id, order date and a running number that counts the customer's "
        "orders in date order (1 for the first order, 2 for the second, ...; same-day orders by order id). Sort by that number.",
        "SELECT order_id, order_date, ROW_NUMBER() OVER (ORDER BY order_date, order_id) AS order_number FROM orders "
        "WHERE customer_id = 4 ORDER BY order_number",
        None,
    ),
    (
        "shop-028",
        "test",
        "hard",
        ("window", "date", "null-trap", "order"),
        "For each month of 2024, give the month as 'YYYY-MM', the number of orders placed that month, and the change from "
        "the previous month's count (NULL for January 2024). Chronological order.",
        "SELECT month, orders_count, orders_count - LAG(orders_count) OVER (ORDER BY month) FROM "
        "(SELECT strftime('%Y-%m', order_date) AS month, COUNT(*) AS orders_count FROM orders "
        "WHERE order_date >= '2024-01-01' AND order_date < '2025-01-01' GROUP BY month) AS monthly ORDER BY month",
        None,
    ),
    (
        "shop-029",
        "train",
        "medium",
        ("date-arithmetic", "join", "count"),
        "How many orders were shipped more than 3 days after they were placed?",
        "SELECT COUNT(*) FROM orders o JOIN shipments s ON s.order_id = o.order_id WHERE julianday(s.shipped_date) - julianday(o.order_date) > 3",
        "SELECT COUNT(*) FROM orders o JOIN shipments s ON s.order_id = o.order_id WHERE s.shipped_date - o.order_date > 3",
    ),
    (
        "shop-030",
        "train",
        "hard",
        ("date-arithmetic", "group-by", "subquery"),
        "Which customers signed up in 2024 and placed their first order at most 7 days after signing up? Return their customer ids.",
        "SELECT c.customer_id FROM customers c JOIN (SELECT customer_id, MIN(order_date) AS first_order FROM orders GROUP BY customer_id) f "
        "ON f.customer_id = c.customer_id WHERE c.signup_date >= '2024-01-01' AND c.signup_date < '2025-01-01' "
        "AND julianday(f.first_order) - julianday(c.signup_date) <= 7",
        "SELECT c.customer_id FROM customers c JOIN (SELECT customer_id, MIN(order_date) AS first_order FROM orders GROUP BY customer_id) f "
        "ON f.customer_id = c.customer_id WHERE c.signup_date >= '2024-01-01' AND c.signup_date < '2025-01-01' "
        "AND f.first_order - c.signup_date <= 7",
    ),
    (
        "shop-031",
        "dev",
        "hard",
        ("null-trap", "subquery", "rounding"),
        "What is the average value of delivered orders, where an order's value is the sum over its items of quantity * "
        "unit_price * (1 - discount) (a missing discount means none), without the shipping fee? Round to 2 decimals.",
        "SELECT ROUND(AVG(order_value), 2) FROM (SELECT o.order_id, SUM(oi.quantity * oi.unit_price * (1 - COALESCE(oi.discount, 0))) AS order_value "
        "FROM orders o JOIN order_items oi ON oi.order_id = o.order_id WHERE o.status = 'delivered' GROUP BY o.order_id) AS values_per_order",
        None,
    ),
    (
        "shop-032",
        "train",
        "hard",
        ("join", "group-by", "order", "limit", "null-trap"),
        "Which product brought in the most revenue over all orders that were not cancelled (revenue = quantity * unit_price * "
        "(1 - discount), a missing discount means none)? Return its name and the revenue rounded to 2 decimals.",
        "SELECT p.name, ROUND(SUM(oi.quantity * oi.unit_price * (1 - COALESCE(oi.discount, 0))), 2) FROM order_items oi "
        "JOIN orders o ON o.order_id = oi.order_id JOIN products p ON p.product_id = oi.product_id WHERE o.status <> 'cancelled' "
        "GROUP BY p.product_id, p.name ORDER BY SUM(oi.quantity * oi.unit_price * (1 - COALESCE(oi.discount, 0))) DESC, p.product_id LIMIT 1",
        None,
    ),
    (
        "shop-033",
        "train",
        "medium",
        ("join", "distinct", "count"),
        "How many different customers have paid with a gift card (a completed payment with method 'gift_card')?",
        "SELECT COUNT(DISTINCT o.customer_id) FROM payments p JOIN orders o ON o.order_id = p.order_id "
        "WHERE p.method = 'gift_card' AND p.status = 'completed'",
        None,
    ),
    (
        "shop-034",
        "train",
        "medium",
        ("date", "count"),
        "How many orders were placed on a weekend (a Saturday or a Sunday)?",
        "SELECT COUNT(*) FROM orders WHERE strftime('%w', order_date) IN ('0', '6')",
        None,
    ),
    (
        "shop-035",
        "dev",
        "hard",
        ("anti-join", "date", "empty-result"),
        "Which shipments were delivered before they were shipped? Return their shipment ids (an empty result is a valid answer).",
        "SELECT shipment_id FROM shipments WHERE delivered_date < shipped_date",
        None,
    ),
    (
        "shop-036",
        "test",
        "hard",
        ("join", "percentage", "rounding", "null-trap"),
        "What share of the total amount of completed payments comes from customers of the 'gold' loyalty tier? Give a "
        "percentage (0-100) rounded to 1 decimal.",
        "SELECT ROUND(100.0 * SUM(CASE WHEN c.loyalty_tier = 'gold' THEN p.amount ELSE 0 END) / SUM(p.amount), 1) FROM payments p "
        "JOIN orders o ON o.order_id = p.order_id JOIN customers c ON c.customer_id = o.customer_id WHERE p.status = 'completed'",
        None,
    ),
    (
        "shop-037",
        "train",
        "medium",
        ("null-trap", "aggregate", "rounding"),
        "What is the average discount over all order items, counting an item without a discount as a discount of 0? "
        "Round to 4 decimals.",
        "SELECT ROUND(AVG(COALESCE(discount, 0)), 4) FROM order_items",
        None,
    ),
    (
        "shop-038",
        "train",
        "easy",
        ("null-trap", "aggregate", "rounding"),
        "Among the order items that do have a discount, what is the average discount, rounded to 4 decimals?",
        "SELECT ROUND(AVG(discount), 4) FROM order_items WHERE discount IS NOT NULL",
        None,
    ),
    (
        "shop-039",
        "train",
        "medium",
        ("group-by", "ties", "subquery"),
        "Which country has the most customers? Return the country and its number of customers (all countries if several tie).",
        "SELECT country, COUNT(*) FROM customers GROUP BY country HAVING COUNT(*) = "
        "(SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM customers GROUP BY country) AS counts)",
        None,
    ),
    (
        "shop-040",
        "test",
        "medium",
        ("null-trap", "group-by", "order"),
        "How many customers are in each loyalty tier? Use the tier name 'none' for customers who are not enrolled. Return the "
        "tier and the count, largest count first (ties by tier name).",
        "SELECT COALESCE(loyalty_tier, 'none') AS tier, COUNT(*) AS customers_count FROM customers "
        "GROUP BY COALESCE(loyalty_tier, 'none') ORDER BY customers_count DESC, tier",
        None,
    ),
    (
        "shop-041",
        "train",
        "medium",
        ("join", "distinct"),
        "Which products were sold at least once at a unit price different from their current price? Return the product ids.",
        "SELECT DISTINCT p.product_id FROM products p JOIN order_items oi ON oi.product_id = p.product_id WHERE oi.unit_price <> p.price",
        None,
    ),
    (
        "shop-042",
        "train",
        "easy",
        ("group-by", "having", "order"),
        "Which customers placed more than 20 orders? Return the customer id and the number of orders, most orders first "
        "(ties by customer id).",
        "SELECT customer_id, COUNT(*) AS orders_count FROM orders GROUP BY customer_id HAVING COUNT(*) > 20 "
        "ORDER BY orders_count DESC, customer_id",
        None,
    ),
    (
        "shop-043",
        "dev",
        "hard",
        ("window", "ties"),
        "In the 'Garden' category, which products have the second-highest price (the highest price below the maximum)? "
        "Return their name and price.",
        "SELECT name, price FROM (SELECT name, price, DENSE_RANK() OVER (ORDER BY price DESC) AS price_rank FROM products "
        "WHERE category = 'Garden') AS ranked WHERE price_rank = 2",
        None,
    ),
    (
        "shop-044",
        "train",
        "medium",
        ("date", "group-by", "distinct"),
        "For each year with orders, how many different customers placed at least one order that year? Return the year as "
        "'YYYY' text and the count.",
        "SELECT strftime('%Y', order_date) AS order_year, COUNT(DISTINCT customer_id) FROM orders GROUP BY order_year",
        None,
    ),
    (
        "shop-045",
        "test",
        "medium",
        ("join", "group-by", "order", "limit"),
        "Which 3 cities have the most delivered orders (orders with status 'delivered', by the customer's city)? Return the "
        "city and the count, largest first (ties by city name).",
        "SELECT c.city, COUNT(*) AS delivered_orders FROM orders o JOIN customers c ON c.customer_id = o.customer_id "
        "WHERE o.status = 'delivered' GROUP BY c.city ORDER BY delivered_orders DESC, c.city LIMIT 3",
        None,
    ),
    (
        "shop-046",
        "train",
        "medium",
        ("anti-join", "join"),
        "Which orders have a completed payment but no shipment yet? Return their order ids.",
        "SELECT DISTINCT p.order_id FROM payments p WHERE p.status = 'completed' AND NOT EXISTS "
        "(SELECT 1 FROM shipments s WHERE s.order_id = p.order_id)",
        None,
    ),
    (
        "shop-047",
        "train",
        "medium",
        ("null-trap", "percentage", "rounding"),
        "What percentage of all orders used a coupon code? Round to 2 decimals.",
        "SELECT ROUND(100.0 * COUNT(coupon_code) / COUNT(*), 2) FROM orders",
        None,
    ),
    (
        "shop-048",
        "dev",
        "medium",
        ("conditional-aggregation", "group-by", "order"),
        "For each payment method, how many payments failed and how many were completed? Return the method, the number of "
        "failed payments and the number of completed payments, sorted by method.",
        "SELECT method, SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) "
        "FROM payments GROUP BY method ORDER BY method",
        None,
    ),
    (
        "shop-049",
        "train",
        "medium",
        ("group-by", "order", "rounding"),
        "What is the stock value (price * stock) of the products that are not discontinued, per category? Return the category "
        "and the value rounded to 2 decimals, sorted by category.",
        "SELECT category, ROUND(SUM(price * stock), 2) FROM products WHERE discontinued = 0 GROUP BY category ORDER BY category",
        None,
    ),
    (
        "shop-050",
        "test",
        "hard",
        ("window", "date", "rounding", "order"),
        "For each month of 2024, give the month as 'YYYY-MM', the total of completed payments paid that month (by paid date) "
        "rounded to 2 decimals, and the running total from January up to and including that month rounded to 2 decimals. "
        "Chronological order.",
        "SELECT month, ROUND(total, 2), ROUND(SUM(total) OVER (ORDER BY month), 2) FROM (SELECT strftime('%Y-%m', paid_date) AS month, "
        "SUM(amount) AS total FROM payments WHERE status = 'completed' AND paid_date >= '2024-01-01' AND paid_date < '2025-01-01' "
        "GROUP BY month) AS monthly ORDER BY month",
        None,
    ),
    (
        "shop-051",
        "train",
        "hard",
        ("join", "distinct"),
        "Which customers returned an item from an order that was paid with PayPal (a completed PayPal payment)? Return their "
        "customer ids.",
        "SELECT DISTINCT o.customer_id FROM returns r JOIN order_items oi ON oi.order_item_id = r.order_item_id "
        "JOIN orders o ON o.order_id = oi.order_id JOIN payments p ON p.order_id = o.order_id "
        "WHERE p.method = 'paypal' AND p.status = 'completed'",
        None,
    ),
    (
        "shop-052",
        "train",
        "easy",
        ("group-by", "join"),
        "For each customer in Portugal who has placed an order, what is the date of their latest order? Return the customer "
        "id and that date.",
        "SELECT c.customer_id, MAX(o.order_date) FROM customers c JOIN orders o ON o.customer_id = c.customer_id "
        "WHERE c.country = 'Portugal' GROUP BY c.customer_id",
        None,
    ),
    (
        "shop-053",
        "test",
        "medium",
        ("set-operations", "date", "count"),
        "How many products were ordered both in 2023 and in 2024?",
        "SELECT COUNT(*) FROM (SELECT oi.product_id FROM order_items oi JOIN orders o ON o.order_id = oi.order_id "
        "WHERE o.order_date < '2024-01-01' INTERSECT SELECT oi.product_id FROM order_items oi JOIN orders o "
        "ON o.order_id = oi.order_id WHERE o.order_date >= '2024-01-01') AS both_years",
        None,
    ),
    (
        "shop-054",
        "dev",
        "hard",
        ("group-by", "having", "all-quantifier"),
        "Which customers have placed at least one order and had every one of their orders cancelled? Return their customer ids.",
        "SELECT customer_id FROM orders GROUP BY customer_id HAVING SUM(CASE WHEN status <> 'cancelled' THEN 1 ELSE 0 END) = 0",
        None,
    ),
    (
        "shop-055",
        "test",
        "medium",
        ("join", "filter", "order"),
        "List the returns made for the reason 'damaged' of products in the 'Electronics' category: the return id, the "
        "product name and the return date, by return id.",
        "SELECT r.return_id, p.name, r.return_date FROM returns r JOIN order_items oi ON oi.order_item_id = r.order_item_id "
        "JOIN products p ON p.product_id = oi.product_id WHERE r.reason = 'damaged' AND p.category = 'Electronics' ORDER BY r.return_id",
        None,
    ),
]


def question_rows() -> list[dict[str, Any]]:
    """The questions as dicts (for inspection and docs)."""
    return [
        {
            "id": row[0],
            "split": row[1],
            "difficulty": row[2],
            "skills": row[3],
            "instruction": row[4],
            "sql": row[5],
            "duckdb_sql": row[6],
        }
        for row in SHOP_QUESTIONS
    ]
