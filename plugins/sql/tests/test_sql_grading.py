"""Golden fixtures of the SQL graders: right answers in unusual forms pass, near misses fail with
feedback that names the difference, empty answers and exploits score 0."""

from __future__ import annotations

from typing import Any

import pytest
from rolloutgym_sql import MatchOptions, SqlEnv, SqlTask, compare_results, orders_result, shop_ops_tasks, shop_tasks
from rolloutgym_sql.shop import shop_source


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"call_{name}", "name": name, "arguments": arguments}],
    }


def task(identifier: str) -> SqlTask:
    return next(item for item in shop_tasks() + shop_ops_tasks() if item.id == identifier)


def submit(task_or_id: SqlTask | str, backend: str = "sqlite", **arguments: Any) -> dict[str, Any]:
    """Play one episode that submits ``arguments``; return the final score dict."""
    chosen = task(task_or_id) if isinstance(task_or_id, str) else task_or_id
    environment = SqlEnv(chosen, source=shop_source(), backend=backend)
    try:
        environment.reset(seed=0)
        _, reward, terminated, _, info = environment.step(call("submit_answer", **arguments))
        assert terminated
        assert reward == info["score"]["value"]
        return info["score"]
    finally:
        environment.close()


def run_changes(task_id: str, statements: list[str], backend: str = "sqlite") -> dict[str, Any]:
    environment = SqlEnv(task(task_id), source=shop_source(), backend=backend)
    try:
        environment.reset(seed=0)
        for statement in statements:
            observation, _, terminated, _, _ = environment.step(call("run_sql", sql=statement))
            assert not terminated
            assert not observation[0]["content"].startswith("error"), observation[0]["content"]
        _, _, terminated, _, info = environment.step(call("submit_answer"))
        assert terminated
        return info["score"]
    finally:
        environment.close()


# -- equivalent queries written differently pass --------------------------------------------

EQUIVALENT = [
    (
        "shop-002",
        "SELECT p.product_id, p.name FROM products AS p WHERE p.price > 40 AND p.category = 'Books' ORDER BY p.price "
        "DESC, p.product_id ASC",
    ),
    (
        "shop-002",
        "SELECT name, product_id FROM products WHERE category = 'Books' AND NOT price <= 40 ORDER BY price DESC, "
        "product_id",
    ),
    (
        "shop-011",
        "SELECT category, (SELECT COUNT(*) FROM order_items oi WHERE oi.product_id IN (SELECT product_id FROM "
        "products p2 WHERE p2.category = p.category)) AS n FROM (SELECT DISTINCT category FROM products) p ORDER BY "
        "n DESC",
    ),
    (
        "shop-009",
        "SELECT ROUND(SUM(price) / COUNT(*), 2) AS average_price FROM products WHERE category = 'Electronics'",
    ),
    (
        "shop-014",
        "SELECT c.customer_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id WHERE o.order_id "
        "IS NULL",
    ),
    ("shop-001", "SELECT COUNT(1) AS how_many FROM customers"),
    (
        "shop-026",
        "SELECT p.product_id, p.name, p.category, p.price FROM products p WHERE p.price = (SELECT MAX(price) FROM "
        "products q WHERE q.category = p.category)",
    ),
    (
        "shop-047",
        "SELECT ROUND(100.0 * SUM(CASE WHEN coupon_code IS NOT NULL THEN 1 ELSE 0 END) / COUNT(*), 2) FROM orders",
    ),
]


@pytest.mark.parametrize(("task_id", "sql"), EQUIVALENT)
def test_equivalent_query_passes(task_id: str, sql: str) -> None:
    score = submit(task_id, sql=sql)
    assert score["value"] == 1.0, score["feedback"]
    assert score["components"]["executes"]["value"] == 1.0


def test_equivalent_query_passes_on_duckdb(needs_duckdb: None) -> None:
    for task_id, sql in EQUIVALENT[:3]:
        score = submit(task_id, backend="duckdb", sql=sql)
        assert score["value"] == 1.0, (task_id, score["feedback"])


# -- near misses fail, and the feedback names the difference ----------------------------------


def test_wrong_order_fails_when_the_gold_query_orders() -> None:
    score = submit(
        "shop-002",
        sql="SELECT product_id, name FROM products WHERE category = 'Books' AND price > 40 ORDER BY price, product_id",
    )
    assert score["value"] == 0.0
    assert "wrong order" in score["feedback"]
    assert score["components"]["executes"]["value"] == 1.0


def test_order_is_free_when_the_gold_query_does_not_order() -> None:
    score = submit(
        "shop-004",
        sql="SELECT customer_id, first_name, last_name FROM customers WHERE city = 'Lisbon' ORDER BY last_name DESC, "
        "customer_id DESC",
    )
    assert score["value"] == 1.0, score["feedback"]


def test_missing_duplicates_fail() -> None:
    portuguese_cities = SqlTask(
        "dup",
        "List the city of every customer in Portugal (one row per customer).",
        gold_sql=("SELECT city FROM customers WHERE country = 'Portugal'",),
    )
    score = submit(portuguese_cities, sql="SELECT DISTINCT city FROM customers WHERE country = 'Portugal'")
    assert score["value"] == 0.0
    assert "expected 212 rows, got 2" in score["feedback"]
    assert (
        submit(portuguese_cities, sql="SELECT c.city FROM customers c WHERE c.country IN ('Portugal')")["value"] == 1.0
    )


def test_extra_duplicates_fail() -> None:
    score = submit("shop-006", sql="SELECT method FROM payments WHERE status = 'completed'")
    assert score["value"] == 0.0
    assert "rows" in score["feedback"]


def test_extra_columns_fail() -> None:
    score = submit(
        "shop-002",
        sql="SELECT product_id, name, price FROM products WHERE category = 'Books' AND price > 40 ORDER BY price "
        "DESC, product_id",
    )
    assert score["value"] == 0.0
    assert "expected 2 columns" in score["feedback"] and "more columns" in score["feedback"]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT AVG(price) FROM products WHERE category = 'Electronics'",
        "SELECT ROUND(AVG(price), 3) FROM products WHERE category = 'Electronics'",
        "SELECT ROUND(AVG(price)) FROM products WHERE category = 'Electronics'",
        "SELECT CAST(AVG(price) AS INTEGER) FROM products WHERE category = 'Electronics'",
    ],
)
def test_wrong_rounding_fails(sql: str) -> None:
    score = submit("shop-009", sql=sql)
    assert score["value"] == 0.0
    assert "missing 1 expected row" in score["feedback"]


def test_null_trap_fails_and_null_is_not_zero() -> None:
    assert submit("shop-008", sql="SELECT COUNT(*) FROM customers WHERE loyalty_tier <> 'gold'")["value"] == 0.0
    zero_for_null = (
        "SELECT month, orders_count, COALESCE(orders_count - LAG(orders_count) OVER (ORDER BY month), 0) FROM "
        "(SELECT strftime('%Y-%m', order_date) AS month, COUNT(*) AS orders_count FROM orders "
        "WHERE order_date >= '2024-01-01' AND order_date < '2025-01-01' GROUP BY month) AS monthly ORDER BY month"
    )
    score = submit("shop-028", sql=zero_for_null)
    assert score["value"] == 0.0
    assert "NULL" in score["feedback"]


def test_failing_sql_scores_zero_with_the_database_message() -> None:
    score = submit("shop-001", sql="SELECT COUNT(*) FROM customer")
    assert score["value"] == 0.0
    assert score["components"]["executes"]["value"] == 0.0
    assert "no such table: customer" in score["feedback"]


def test_empty_answers_score_zero() -> None:
    assert submit("shop-001")["value"] == 0.0
    assert "no answer was submitted" in submit("shop-001", answer="  ")["feedback"]
    environment = SqlEnv(task("shop-001"), source=shop_source())
    environment.reset(seed=0)
    _, reward, terminated, _, info = environment.step({"role": "assistant", "content": ""})
    environment.close()
    assert terminated and reward == 0.0 and info["score"]["value"] == 0.0


# -- value answers ---------------------------------------------------------------------------


def test_value_answers_are_compared_as_values() -> None:
    assert submit("shop-001", answer="500")["value"] == 1.0
    assert submit("shop-001", answer="500.0")["value"] == 1.0
    assert submit("shop-001", answer="499")["value"] == 0.0
    environment = SqlEnv(task("shop-001"), source=shop_source())
    environment.reset(seed=0)
    _, reward, _, _, _ = environment.step({"role": "assistant", "content": "500"})
    environment.close()
    assert reward == 1.0


# -- exploits score 0 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_id", "arguments"),
    [
        ("shop-002", {"sql": "SELECT * FROM products"}),
        ("shop-002", {"sql": "SELECT product_id, name FROM products ORDER BY price DESC, product_id"}),
        ("shop-001", {"answer": "[1, 2, 3, 499, 500, 501]"}),
        ("shop-001", {"sql": "SELECT COUNT(*) FROM customers UNION ALL SELECT COUNT(*) FROM orders"}),
        ("shop-035", {"sql": "SELECT shipment_id FROM shipments"}),
        ("shop-001", {"sql": "DELETE FROM customers"}),
    ],
)
def test_exploits_score_zero(task_id: str, arguments: dict[str, Any]) -> None:
    assert submit(task_id, **arguments)["value"] == 0.0


def test_an_empty_result_can_be_the_right_answer() -> None:
    score = submit(
        "shop-035", sql="SELECT shipment_id FROM shipments WHERE julianday(delivered_date) < julianday(shipped_date)"
    )
    assert score["value"] == 1.0, score["feedback"]


# -- the database diff ------------------------------------------------------------------------


def test_database_diff_names_changed_values(backend: str) -> None:
    score = run_changes("shop-ops-001", ["UPDATE orders SET status = 'delivered' WHERE order_id = 202"], backend)
    assert score["value"] == 0.0
    diff = score["components"]["database_diff"]["feedback"]
    assert "order_id=202" in diff and "status is 'delivered', expected 'cancelled'" in diff


def test_database_diff_names_missing_and_extra_rows(backend: str) -> None:
    missing = run_changes("shop-ops-005", [], backend)
    assert missing["value"] == 0.0
    assert "1 missing row" in missing["feedback"] and "'Lovelace'" in missing["feedback"]
    extra = run_changes(
        "shop-ops-001",
        ["UPDATE orders SET status = 'cancelled' WHERE order_id = 202", "DELETE FROM payments WHERE payment_id = 1"],
        backend,
    )
    assert extra["value"] == 0.0
    assert "payments" in extra["feedback"] and "missing row" in extra["feedback"]
    inserted = run_changes(
        "shop-ops-006",
        [
            "DELETE FROM payments WHERE order_id = 21 AND status = 'failed'",
            "INSERT INTO payments VALUES (99999, 21, '2024-01-01', 1.0, 'card', 'completed')",
        ],
        backend,
    )
    assert inserted["value"] == 0.0 and "1 extra row" in inserted["feedback"] and "99999" in inserted["feedback"]


def test_database_diff_passes_an_equivalent_change(backend: str) -> None:
    statements = [
        "UPDATE orders SET status = 'delivered' WHERE order_id IN (SELECT o.order_id FROM orders o JOIN shipments s "
        "ON s.order_id = o.order_id WHERE o.customer_id = 84 AND o.status = 'shipped' AND s.shipped_date < "
        "'2024-05-01')"
    ]
    score = run_changes("shop-ops-002", statements, backend)
    assert score["value"] == 1.0, score["feedback"]
    assert score["components"]["executes"]["value"] == 1.0


def test_a_new_table_is_an_unexpected_change() -> None:
    score = run_changes(
        "shop-ops-001",
        ["UPDATE orders SET status = 'cancelled' WHERE order_id = 202", "CREATE TABLE scratch (x INTEGER)"],
    )
    assert score["value"] == 0.0 and "unexpected new table" in score["feedback"]


# -- the comparison itself -------------------------------------------------------------------


def test_compare_results_rules() -> None:
    assert compare_results(["n"], [(3,)], ["m"], [(3.0,)]).match
    assert not compare_results(["n"], [(12.35,)], ["n"], [(12.3456,)]).match
    assert compare_results(["n"], [(0.1 + 0.2,)], ["n"], [(0.3,)]).match
    assert not compare_results(["n"], [(None,)], ["n"], [(0,)]).match
    assert not compare_results(["n"], [(None,)], ["n"], [("",)]).match
    assert compare_results(["n"], [(None,)], ["n"], [(None,)]).match
    assert compare_results(["a", "b"], [(1, "x"), (2, "y")], ["b", "a"], [("y", 2), ("x", 1)]).match
    strict = MatchOptions(column_order="strict")
    assert not compare_results(["a", "b"], [(1, "x")], ["b", "a"], [("x", 1)], options=strict).match
    named = MatchOptions(column_names="match")
    assert not compare_results(["total"], [(1,)], ["n"], [(1,)], options=named).match
    assert compare_results(["total"], [(1,)], ["TOTAL"], [(1,)], options=named).match
    loose = MatchOptions(abs_tol=0.01)
    assert compare_results(["n"], [(12.35,)], ["n"], [(12.3456,)], options=loose).match
    assert not compare_results(["n"], [(1,), (1,)], ["n"], [(1,)]).match
    assert not compare_results(["n"], [(1,), (2,)], ["n"], [(2,), (1,)], ordered=True).match
    assert compare_results(["n"], [(1,), (2,)], ["n"], [(2,), (1,)]).match


def test_orders_result_looks_at_the_top_level_only() -> None:
    assert orders_result("SELECT a FROM t ORDER BY a")
    assert orders_result("select a from t order\n by a desc limit 3")
    assert not orders_result("SELECT a, ROW_NUMBER() OVER (ORDER BY a) FROM t")
    assert not orders_result("SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 3) AS x")
    assert not orders_result("SELECT 'order by' AS text FROM t -- ORDER BY a")
