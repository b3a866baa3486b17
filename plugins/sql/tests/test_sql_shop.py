"""The shipped shop data and tasks: deterministic, the promised size, sound gold SQL."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter

import pytest
from rolloutgym_sql import compare_results, orders_result, shop_ops_tasks, shop_tasks
from rolloutgym_sql._backends import open_session
from rolloutgym_sql._results import Limits
from rolloutgym_sql._shop_data import build_shop
from rolloutgym_sql.shop import NOTHING_TO_DO_TASKS, shop_source

# Changing the generator changes ground truth: bump the env versions and this digest together.
SHOP_CONTENT_DIGEST = "ccc6ae9ff69aad40427fe25c27783e4e4aa345044f46340ebd979d698b3d9c51"
EMPTY_ANSWER_QUESTIONS = {"shop-035"}


def _content_digest(connection: sqlite3.Connection) -> str:
    digest = hashlib.sha256()
    tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    for table in tables:
        digest.update(table.encode())
        for row in connection.execute(f"SELECT * FROM {table} ORDER BY 1"):
            digest.update(json.dumps(row).encode())
    return digest.hexdigest()


def _fresh() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    build_shop(connection)
    return connection


def test_the_generator_is_deterministic() -> None:
    first, second = _fresh(), _fresh()
    try:
        assert _content_digest(first) == _content_digest(second)
        assert _content_digest(first) == SHOP_CONTENT_DIGEST, (
            "the shop generator's output changed: bump sql/shop-v0 and sql/shop-ops-v0"
        )
    finally:
        first.close()
        second.close()


def test_the_database_has_about_ten_thousand_rows_in_seven_tables() -> None:
    connection = _fresh()
    try:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert sorted(tables) == ["customers", "order_items", "orders", "payments", "products", "returns", "shipments"]
        total = sum(connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in tables)
        assert 9_000 <= total <= 12_000
        # The NULL traps the questions rely on exist in the data.
        assert connection.execute("SELECT COUNT(*) FROM customers WHERE email IS NULL").fetchone()[0] > 0
        assert connection.execute("SELECT COUNT(*) FROM customers WHERE loyalty_tier IS NULL").fetchone()[0] > 0
        assert connection.execute("SELECT COUNT(*) FROM order_items WHERE discount IS NULL").fetchone()[0] > 0
    finally:
        connection.close()


def test_questions_cover_the_promised_range() -> None:
    tasks = shop_tasks()
    assert len(tasks) >= 50
    assert len({task.id for task in tasks}) == len(tasks)
    splits = Counter(task.split for task in tasks)
    assert set(splits) == {"train", "dev", "test"} and min(splits.values()) >= 8
    skills = {skill for task in tasks for skill in task.skills}
    assert {"join", "group-by", "window", "date-arithmetic", "null-trap", "filter"} <= skills
    assert len({task.instruction for task in tasks}) == len(tasks)
    assert Counter(task.difficulty for task in tasks).keys() == {"easy", "medium", "hard"}


def test_ops_tasks_change_data_except_the_nothing_to_do_one() -> None:
    tasks = shop_ops_tasks()
    assert len(tasks) >= 10 and all(task.changes_data for task in tasks)
    limits = Limits()
    for task in tasks:
        session = open_session("sqlite", shop_source(), read_only=False, limits=limits)
        try:
            changed = sum(session.execute(statement, max_rows=1).changed_rows or 0 for statement in task.gold_sql)
        finally:
            session.close()
        if task.id in NOTHING_TO_DO_TASKS:
            assert changed == 0, task.id
        else:
            assert changed > 0, f"{task.id}: the gold statements change nothing, so the null policy would pass"


def test_gold_results_are_non_empty_and_ordered_results_unambiguous() -> None:
    """An ordered gold query must order by a unique key: reversing the scan order changes nothing."""
    connection = sqlite3.connect(":memory:")
    connection.deserialize(shop_source().sqlite_image())
    try:
        for task in shop_tasks():
            sql = task.gold_sql[0]
            rows = connection.execute(sql).fetchall()
            if task.id in EMPTY_ANSWER_QUESTIONS:
                assert rows == [], task.id
                continue
            assert rows, f"{task.id}: the gold query returns nothing"
            assert all(value is not None for value in rows[0]) or "null-trap" in task.skills, task.id
            if orders_result(sql):
                connection.execute("PRAGMA reverse_unordered_selects = ON")
                reversed_rows = connection.execute(sql).fetchall()
                connection.execute("PRAGMA reverse_unordered_selects = OFF")
                assert reversed_rows == rows, f"{task.id}: its ORDER BY leaves ties, so the expected order is ambiguous"
    finally:
        connection.close()


def test_sqlite_and_duckdb_gold_queries_agree(needs_duckdb: None) -> None:
    limits = Limits()
    sqlite_session = open_session("sqlite", shop_source(), read_only=True, limits=limits)
    duckdb_session = open_session("duckdb", shop_source(), read_only=True, limits=limits)
    try:
        for task in shop_tasks():
            expected = sqlite_session.execute(task.gold_for("sqlite")[0], max_rows=100_000)
            got = duckdb_session.execute(task.gold_for("duckdb")[0], max_rows=100_000)
            comparison = compare_results(
                expected.columns, expected.rows, got.columns, got.rows, ordered=orders_result(task.gold_sql[0])
            )
            assert comparison.match, f"{task.id}: {comparison.feedback}"
    finally:
        sqlite_session.close()
        duckdb_session.close()


@pytest.mark.parametrize("task_id", ["shop-ops-002", "shop-ops-009"])
def test_sqlite_and_duckdb_end_states_agree(task_id: str, needs_duckdb: None) -> None:
    """(Not every task: ROUND() of a float halfway case differs between the engines, e.g. shop-ops-008;
    each backend's ground truth comes from running the gold SQL on that backend.)"""
    from rolloutgym_sql import diff_databases
    from rolloutgym_sql.grading import expected_state

    task = next(item for item in shop_ops_tasks() if item.id == task_id)
    sqlite_state = expected_state(task, shop_source(), "sqlite", Limits())
    duckdb_state = expected_state(task, shop_source(), "duckdb", Limits())
    diff = diff_databases(sqlite_state, duckdb_state)
    assert diff.match, diff.feedback


def test_the_package_exports_lazily_what_it_lists() -> None:
    import rolloutgym_sql

    assert set(rolloutgym_sql.__all__) >= {"SqlEnv", "load_task_file", "grade_query"}
    for name in rolloutgym_sql.__all__:
        assert getattr(rolloutgym_sql, name) is not None
