"""Abuse tests: each hostile statement ends within its limit with a clear tool error (or a cut
result), never crashes the episode, and the source database file stays byte-identical."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import pytest
from rolloutgym_sql import Limits, SqlEnv, SqliteFileSource, SqlTask
from rolloutgym_sql.shop import shop_source

LIMIT_SECONDS = 1.0
# Wall-clock slack on a loaded 2-core CI machine (a killed worker is restarted); the point is "ends",
# not a benchmark: without the limit these statements run for hours, so any bound far below that shows it.
SLACK_SECONDS = 30.0


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"call_{name}", "name": name, "arguments": arguments}],
    }


@pytest.fixture
def database_file(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    path.write_bytes(shop_source().sqlite_image())
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _environment(path: Path, backend: str, *, changes_data: bool) -> SqlEnv:
    if changes_data:
        task = SqlTask(
            "abuse-write",
            "Change nothing.",
            gold_sql=("UPDATE orders SET status = status WHERE 1 = 0",),
            changes_data=True,
        )
    else:
        task = SqlTask("abuse-read", "How many customers are there?", gold_sql=("SELECT COUNT(*) FROM customers",))
    return SqlEnv(
        task, source=SqliteFileSource(str(path)), backend=backend, limits=Limits(statement_seconds=LIMIT_SECONDS)
    )


def _run(environment: SqlEnv, sql: Any) -> tuple[str, float, dict[str, Any]]:
    started = time.perf_counter()
    observation, reward, terminated, truncated, info = environment.step(call("run_sql", sql=sql))
    elapsed = time.perf_counter() - started
    assert not terminated and not truncated and reward == 0.0
    assert len(observation) == 1 and observation[0]["role"] == "tool"
    return observation[0]["content"], elapsed, info


ERRORS = {
    "attach a file": ("ATTACH DATABASE '{path}' AS other", ("not authorized", "permission", "attach")),
    "vacuum into a file": ("VACUUM INTO '{tmp}/copy.sqlite'", ("not authorized", "not allowed", "permission")),
    "load an extension": (
        "SELECT load_extension('/usr/lib/x86_64-linux-gnu/libsqlite3.so.0')",
        ("not authorized", "not allowed", "load_extension"),
    ),
    "pragma writable_schema": ("PRAGMA writable_schema = 1", ("not authorized", "not allowed")),
    "infinite recursive cte": (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r",
        ("longer than 1 s", "stopped"),
    ),
    "huge cartesian product": (
        "SELECT COUNT(*) FROM order_items a, order_items b, order_items c",
        ("longer than 1 s", "stopped"),
    ),
    "several statements": ("SELECT 1; DROP TABLE customers", ("one sql statement per call",)),
    "syntax error": ("SELEC * FROM customers", ("syntax",)),
    "unknown table": ("SELECT * FROM no_such_table", ("no_such_table",)),
    "invalid utf-8": ("SELECT '\udcff\udcfe' AS broken", ("not valid utf-8",)),
    "empty statement": ("   ", ("empty",)),
    "not a string": (12345, ("must be a string",)),
}
DUCKDB_ONLY = {
    "load an extension (duckdb)": ("LOAD httpfs", ("not authorized", "not allowed")),
    "install an extension (duckdb)": ("INSTALL httpfs", ("not authorized", "not allowed")),
    "read a file (duckdb)": ("SELECT * FROM read_csv('/etc/passwd')", ("permission", "disabled")),
    "copy to a file (duckdb)": ("COPY customers TO '{tmp}/leak.csv'", ("not authorized", "not allowed")),
    "set a setting (duckdb)": ("SET memory_limit = '100GB'", ("not authorized", "not allowed")),
    # DuckDB has no VACUUM INTO: its parser refuses it.
    "vacuum into a file": ("VACUUM INTO '{tmp}/copy.sqlite'", ("syntax error",)),
}


@pytest.mark.parametrize("changes_data", [False, True], ids=["read-only", "read-write"])
def test_hostile_statements_end_with_clear_tool_errors(
    backend: str, changes_data: bool, database_file: Path, tmp_path: Path
) -> None:
    before = _digest(database_file)
    environment = _environment(database_file, backend, changes_data=changes_data)
    cases = {**ERRORS, **(DUCKDB_ONLY if backend == "duckdb" else {})}
    try:
        environment.reset(seed=0)
        for label, (template, expected) in cases.items():
            sql = template.format(path=database_file, tmp=tmp_path) if isinstance(template, str) else template
            content, elapsed, info = _run(environment, sql)
            assert content.startswith("error: "), f"{label}: expected a tool error, got {content[:200]!r}"
            assert any(word in content.lower() for word in expected), f"{label}: unclear error {content!r}"
            assert elapsed < LIMIT_SECONDS + SLACK_SECONDS, f"{label}: took {elapsed:.1f} s"
        assert info["sql_errors"] + info["invalid_actions"] == len(cases)
        # The episode still works after all of that.
        content, _, _ = _run(environment, "SELECT COUNT(*) AS customers FROM customers")
        assert "500" in content
    finally:
        environment.close()
    assert _digest(database_file) == before
    assert not (tmp_path / "copy.sqlite").exists() and not (tmp_path / "leak.csv").exists()


def test_large_results_are_cut_with_a_note(backend: str, database_file: Path) -> None:
    before = _digest(database_file)
    environment = _environment(database_file, backend, changes_data=False)
    try:
        environment.reset(seed=0)
        content, elapsed, _ = _run(
            environment, "SELECT a.order_item_id, b.order_item_id FROM order_items a, order_items b"
        )
        assert "the result was cut" in content and elapsed < LIMIT_SECONDS + SLACK_SECONDS
        assert len(content.encode()) < 10_000
        ten_megabytes = (
            "SELECT repeat('x', 10 * 1024 * 1024) AS big"
            if backend == "duckdb"
            else "SELECT hex(zeroblob(5 * 1024 * 1024)) AS big"
        )
        content, elapsed, _ = _run(environment, ten_megabytes)
        assert not content.startswith("error"), content[:200]
        assert len(content.encode()) < 10_000 and "…" in content
        many_rows = (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 200000) SELECT n, 'row ' || n "
            "FROM r"
        )
        content, elapsed, _ = _run(environment, many_rows)
        assert "the result was cut" in content and len(content.encode()) < 10_000
    finally:
        environment.close()
    assert _digest(database_file) == before


def test_read_only_tasks_refuse_changes(backend: str, database_file: Path) -> None:
    environment = _environment(database_file, backend, changes_data=False)
    try:
        environment.reset(seed=0)
        for statement in (
            "DELETE FROM customers",
            "UPDATE products SET price = 0",
            "CREATE TABLE t (x INTEGER)",
            "DROP TABLE orders",
        ):
            content, _, _ = _run(environment, statement)
            assert content.startswith("error: ") and "read-only" in content, content
        content, _, _ = _run(environment, "SELECT COUNT(*) FROM customers")
        assert "500" in content
    finally:
        environment.close()


def test_episodes_are_isolated_and_the_source_is_untouched(backend: str, database_file: Path) -> None:
    before = _digest(database_file)
    first = _environment(database_file, backend, changes_data=True)
    second = _environment(database_file, backend, changes_data=True)
    try:
        first.reset(seed=0)
        second.reset(seed=0)
        content, _, _ = _run(first, "DELETE FROM order_items")
        assert content.startswith("OK"), content
        content, _, _ = _run(second, "SELECT COUNT(*) FROM order_items")
        assert "4430" in content
        first.reset(seed=1)  # a new episode gets a fresh copy
        content, _, _ = _run(first, "SELECT COUNT(*) FROM order_items")
        assert "4430" in content
    finally:
        first.close()
        second.close()
    assert _digest(database_file) == before


def test_malformed_tool_calls_are_counted_not_crashes(backend: str) -> None:
    task = SqlTask("t", "How many customers?", gold_sql=("SELECT COUNT(*) FROM customers",))
    environment = SqlEnv(task, source=shop_source(), backend=backend)
    try:
        environment.reset(seed=0)
        bad_calls = [
            {"id": "1", "name": "drop_everything", "arguments": {}},
            {"id": "2", "name": "run_sql", "arguments": {}},
            {"id": "3", "name": "run_sql", "arguments": {"query": "SELECT 1"}},
            {"id": "4", "name": "run_sql", "arguments": "{not json"},
            {"id": "5", "name": "run_sql", "arguments": ["SELECT 1"]},
            {"id": "6", "name": "describe_schema", "arguments": {"table": "nope"}},
            "not a call",
        ]
        observation, reward, terminated, _, info = environment.step(
            {"role": "assistant", "content": "", "tool_calls": bad_calls}
        )
        assert not terminated and reward == 0.0
        assert len(observation) == len(bad_calls)
        assert all(message["content"].startswith("error: ") for message in observation)
        assert info["invalid_actions"] == len(bad_calls)
        assert "unknown tool 'drop_everything'" in observation[0]["content"]
        observation, _, _, _, _ = environment.step(call("describe_schema"))
        assert "TABLE customers (500 rows)" in observation[0]["content"] and "PRIMARY KEY" in observation[0]["content"]
        assert "FOREIGN KEY (customer_id) REFERENCES customers(customer_id)" in observation[0]["content"]
    finally:
        environment.close()
