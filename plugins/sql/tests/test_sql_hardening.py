"""Read-only, pristine gold results and hard limits, on both backends (issue 17, item 3).

* Read-only holds for every statement form, including ones that run a write inside another
  statement (DuckDB ``EXPLAIN ANALYZE <write>``, ``query('...')``), transactions, temp
  objects, macros, settings, attach/copy/export: afterwards the episode's data equals the
  pristine data and the source file is byte-identical.
* Gold results come from pristine data only: an episode that tried to change its data
  cannot change what it (or any later episode) is graded against.
* One long function call (SQLite ``printf`` with a huge precision, DuckDB ``lpad``/
  ``repeat`` with a huge count) ends within the statement limit plus a bounded grace with a
  clear tool error: the worker process running it is killed. The episode goes on, a
  read-write episode keeps its earlier changes, and the source is untouched.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from rolloutgym_sql import Limits, SqlEnv, SqliteFileSource, SqlTask
from rolloutgym_sql.shop import shop_source

LIMIT_SECONDS = 1.0
# The worker is killed at 1.25 x limit + 1 s; the rest is slack for a loaded 2-core CI machine (restarting
# a worker takes seconds there). Without the limit these calls run for minutes to hours: any bound far
# below that shows the limit acted.
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


def _env(path: Path, backend: str, task: SqlTask) -> SqlEnv:
    return SqlEnv(
        task, source=SqliteFileSource(str(path)), backend=backend, limits=Limits(statement_seconds=LIMIT_SECONDS)
    )


def _run(environment: SqlEnv, sql: Any) -> tuple[str, float]:
    started = time.perf_counter()
    observation, reward, terminated, truncated, _ = environment.step(call("run_sql", sql=sql))
    elapsed = time.perf_counter() - started
    assert not terminated and not truncated and reward == 0.0
    assert len(observation) == 1 and observation[0]["role"] == "tool"
    return observation[0]["content"], elapsed


def _shape(environment: SqlEnv) -> list[Any]:
    session = environment._session
    assert session is not None
    return [(table.name, table.columns, table.row_count) for table in session.tables()]


def _snapshot(environment: SqlEnv) -> dict[str, Any]:
    session = environment._session
    assert session is not None
    return {name: (table.columns, sorted(map(repr, table.rows))) for name, table in session.contents().items()}


# Statements that try to change a read-only task's data, for both backends. Each must leave
# the data as it was (most are refused; EXPLAIN of a write in SQLite only prints bytecode).
COMMON_WRITES = [
    "DELETE FROM customers",
    "DELETE FROM customers RETURNING *",
    "UPDATE products SET price = 0",
    "INSERT INTO customers (customer_id, name) VALUES (999999, 'x')",
    "INSERT INTO customers SELECT * FROM customers WHERE 1 = 0",
    "WITH doomed AS (SELECT customer_id FROM customers) DELETE FROM customers WHERE customer_id IN (SELECT "
    "customer_id FROM doomed)",
    "CREATE TABLE stolen AS SELECT * FROM customers",
    "CREATE TEMP TABLE scratch AS SELECT 1 AS x",
    "CREATE VIEW v AS SELECT 1 AS x",
    "CREATE INDEX ix ON customers (name)",
    "DROP TABLE order_items",
    "ALTER TABLE customers RENAME TO clients",
    "ALTER TABLE customers ADD COLUMN hacked INTEGER",
    "BEGIN",
    "DELETE FROM orders",
    "COMMIT",
    "ROLLBACK",
    "SELECT 1; DELETE FROM customers",
    "DELETE FROM customers; SELECT 1",
    "EXPLAIN DELETE FROM customers",
    "ATTACH ':memory:' AS other",
    "DETACH main",
    "VACUUM",
    "ANALYZE",
]
SQLITE_WRITES = [
    "REPLACE INTO customers (customer_id, name) VALUES (1, 'x')",
    "INSERT OR REPLACE INTO products (product_id, name) VALUES (1, 'x')",
    "CREATE TRIGGER t AFTER INSERT ON orders BEGIN DELETE FROM customers; END",
    "PRAGMA query_only = OFF",
    "PRAGMA writable_schema = ON",
    "PRAGMA foreign_keys = OFF",
    "PRAGMA journal_mode = OFF",
    "SAVEPOINT s",
    "RELEASE s",
    "REINDEX",
    "EXPLAIN QUERY PLAN DELETE FROM customers",
    "UPDATE sqlite_master SET sql = 'x'",
    "CREATE VIRTUAL TABLE f USING fts5(x)",
]
DUCKDB_WRITES = [
    "EXPLAIN ANALYZE DELETE FROM customers",
    "EXPLAIN ANALYZE UPDATE products SET price = 0",
    "EXPLAIN ANALYZE INSERT INTO customers (customer_id, name) VALUES (999999, 'x')",
    "EXPLAIN ANALYSE DROP TABLE order_items",
    "EXPLAIN (ANALYZE) DELETE FROM orders",
    "EXPLAIN ANALYZE CREATE TABLE stolen AS SELECT 1",
    "EXPLAIN ANALYZE CREATE OR REPLACE TABLE customers AS SELECT * FROM customers LIMIT 1",
    "CREATE OR REPLACE TABLE customers AS SELECT * FROM customers LIMIT 1",
    "TRUNCATE customers",
    "SELECT * FROM query('DELETE FROM customers')",
    "CREATE MACRO m(x) AS x + 1",
    "CREATE TEMP MACRO m(x) AS x + 1",
    "CREATE SEQUENCE s",
    "CREATE TYPE mood AS ENUM ('a')",
    "COPY customers FROM '/etc/passwd'",
    "COPY (SELECT 1) TO '{tmp}/leak.csv'",
    "EXPORT DATABASE '{tmp}/export'",
    "IMPORT DATABASE '{tmp}/export'",
    "PRAGMA enable_profiling",
    "SET threads = 8",
    "RESET memory_limit",
    "SET GLOBAL memory_limit = '100GB'",
    "CALL pragma_version()",
    "CHECKPOINT",
    "FORCE CHECKPOINT",
    "ATTACH '{tmp}/other.duckdb' AS other",
    "USE memory",
    "DETACH task_data",
    "INSTALL httpfs",
    "LOAD httpfs",
    "UPDATE EXTENSIONS",
    "SET VARIABLE x = 1",
    "MERGE INTO customers USING (SELECT 1 AS id) s ON customers.customer_id = s.id WHEN MATCHED THEN DELETE",
]


def test_read_only_holds_for_every_statement_form(backend: str, database_file: Path, tmp_path: Path) -> None:
    before = _digest(database_file)
    # A gold SQL no other test uses: its expected result is computed (and cached) only after
    # the attacks, which would be the moment a poisoned session leaked into grading.
    gold = f"SELECT COUNT(*) AS n, SUM(price) AS total FROM products /* read-only-{backend} */"
    task = SqlTask("ro-hardening", "How many products are there, and what is their total price?", gold_sql=(gold,))
    environment = _env(database_file, backend, task)
    pristine = _env(database_file, backend, task)
    statements = COMMON_WRITES + (DUCKDB_WRITES if backend == "duckdb" else SQLITE_WRITES)
    try:
        environment.reset(seed=0)
        pristine.reset(seed=0)
        expected, expected_shape = _snapshot(pristine), _shape(pristine)
        for template in statements:
            sql = template.format(tmp=tmp_path)
            content, _ = _run(environment, sql)
            assert _shape(environment) == expected_shape, f"{sql!r} changed a read-only task: {content[:200]}"
            if sql.split()[0].upper() in {
                "DELETE",
                "UPDATE",
                "INSERT",
                "DROP",
                "ALTER",
                "TRUNCATE",
                "REPLACE",
                "MERGE",
            }:
                assert content.startswith("error: "), (sql, content)
                if template in COMMON_WRITES and ";" not in sql:
                    assert "read-only" in content, (sql, content)
        assert _snapshot(environment) == expected
        content, _ = _run(environment, "SELECT COUNT(*) AS customers FROM customers")
        assert "500" in content
        _, reward, terminated, _, info = environment.step(call("submit_answer", sql=gold))
        assert terminated and reward == 1.0, info
    finally:
        environment.close()
        pristine.close()
    assert _digest(database_file) == before
    assert not (tmp_path / "leak.csv").exists() and not (tmp_path / "export").exists()
    assert not (tmp_path / "other.duckdb").exists()
    # The cached gold result is the pristine one: a fresh episode's oracle still scores 1.
    connection = sqlite3.connect(database_file)
    count, total = connection.execute("SELECT COUNT(*), SUM(price) FROM products").fetchone()
    connection.close()
    environment = _env(database_file, backend, task)
    try:
        environment.reset(seed=1)
        _, reward, _, _, info = environment.step(call("submit_answer", answer=f"[[{count}, {total}]]"))
        assert reward == 1.0, info
    finally:
        environment.close()


def test_gold_results_never_come_from_an_agent_session(backend: str, database_file: Path) -> None:
    """A read-write episode that empties the table its task is graded on cannot move the gold."""
    gold = f"SELECT COUNT(*) AS n FROM customers /* pristine-gold-{backend} */"
    read_task = SqlTask("gold-read", "How many customers are there?", gold_sql=(gold,))
    write_task = SqlTask(
        "gold-write",
        "Delete the customer with id 1.",
        gold_sql=("DELETE FROM customers WHERE customer_id = 1",),
        changes_data=True,
    )
    writer = _env(database_file, backend, write_task)
    reader = _env(database_file, backend, read_task)
    try:
        writer.reset(seed=0)
        content, _ = _run(writer, "DELETE FROM customers")
        assert content.startswith("OK"), content
        _, reward, _, _, _ = writer.step(call("submit_answer"))
        assert reward == 0.0  # deleting every customer is not what was asked
        reader.reset(seed=0)
        _, reward, _, _, info = reader.step(call("submit_answer", answer="0"))
        assert reward == 0.0, info
        reader.reset(seed=1)
        _, reward, _, _, info = reader.step(call("submit_answer", answer="500"))
        assert reward == 1.0, info
        writer.reset(seed=1)
        _, reward, _, _, info = writer.step(call("submit_answer", sql="DELETE FROM customers WHERE customer_id = 1"))
        assert reward == 1.0, info
    finally:
        writer.close()
        reader.close()


# One function call that runs for a long time or allocates gigabytes; the in-process
# interrupts cannot stop these, killing the worker does.
LONG_CALLS = {
    "sqlite": [
        "SELECT printf('%.*c', 2000000000, 'x')",
        "SELECT length(printf('%.*c', 2147483647, 'y'))",
        "SELECT instr(replace(hex(zeroblob(4000000)), '0', 'a'), replace(hex(zeroblob(500000)), '0', 'a') || 'b')",
        "SELECT length(zeroblob(2000000000))",
        "SELECT length(randomblob(1000000000))",
        "SELECT length(replace(hex(zeroblob(16000000)), '0', '0000000000'))",
        "SELECT count(*) FROM order_items a, order_items b, order_items c, order_items d",
    ],
    "duckdb": [
        "SELECT length(repeat('x', 1000000000))",
        "SELECT length(repeat('ab', 2000000000))",
        "SELECT length(lpad('x', 2000000000, 'y'))",
        "SELECT count(*) FROM range(1000000000000)",
        "SELECT length(string_agg(repeat('x', 100000), '')) FROM range(100000)",
        "SELECT length(list_resize([1], 1000000000))",
        "SELECT sum(length(repeat('x', 1000000 + i % 2))) FROM range(1000000) t(i)",
        "SELECT count(*) FROM order_items a, order_items b, order_items c, order_items d",
    ],
}


@pytest.mark.parametrize("changes_data", [False, True], ids=["read-only", "read-write"])
def test_long_function_calls_end_within_the_limit(backend: str, changes_data: bool, database_file: Path) -> None:
    before = _digest(database_file)
    if changes_data:
        task = SqlTask(
            "limits-write",
            "Set the price of product 1 to 1.",
            gold_sql=("UPDATE products SET price = 1 WHERE product_id = 1",),
            changes_data=True,
        )
    else:
        task = SqlTask("limits-read", "How many customers are there?", gold_sql=("SELECT COUNT(*) FROM customers",))
    environment = _env(database_file, backend, task)
    try:
        environment.reset(seed=0)
        if changes_data:
            content, _ = _run(environment, "UPDATE products SET price = 1 WHERE product_id = 1")
            assert content.startswith("OK"), content
        for sql in LONG_CALLS[backend]:
            content, elapsed = _run(environment, sql)
            assert content.startswith("error: "), f"{sql}: {content[:200]}"
            assert any(word in content.lower() for word in ("stopped", "memory", "too big")), f"{sql}: {content!r}"
            assert elapsed < LIMIT_SECONDS + SLACK_SECONDS, f"{sql}: took {elapsed:.1f} s"
            started = time.perf_counter()
            content, _ = _run(environment, "SELECT COUNT(*) AS n FROM customers")
            assert "500" in content, content
            assert time.perf_counter() - started < 30.0  # a restarted worker answers
        if changes_data:
            # The change made before the killed statements is still there.
            content, _ = _run(environment, "SELECT price FROM products WHERE product_id = 1")
            assert "\n1" in content or " 1.0" in content or "\n1.0" in content, content
            _, reward, _, _, info = environment.step(call("submit_answer"))
            assert reward == 1.0, info
    finally:
        environment.close()
    assert _digest(database_file) == before


_ROOM_SCRIPT = """
import resource, sys
from rolloutgym_sql import Limits
from rolloutgym_sql._worker_process import _encode, _in_use, _TrustedRoom

limits = Limits(memory_bytes=64 * 1024 * 1024)
hard = resource.getrlimit(resource.RLIMIT_AS)[1]
cap = _in_use() + limits.memory_bytes
resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
try:
    bytearray(200 * 1024 * 1024)
    sys.exit("the cap did not hold")
except MemoryError:
    pass
with _TrustedRoom(limits):
    grown = bytearray(200 * 1024 * 1024)  # the grader's read: beyond the agent's cap, within 4x
del grown
assert resource.getrlimit(resource.RLIMIT_AS) == (cap, hard), "the cap was not put back"
try:
    bytearray(200 * 1024 * 1024)
    sys.exit("the cap was not put back")
except MemoryError:
    pass
import pickle


class Huge:
    def __reduce__(self):
        raise MemoryError


status, message = pickle.loads(_encode(("ok", Huge()), limits))
assert status == "statement" and "memory" in message, (status, message)
print("ok")
"""


def test_trusted_reads_get_room_beyond_the_agents_memory_cap() -> None:
    """The grader's reads and reply pickling get room beyond the cap; the cap comes back exactly.

    A database engine keeps part of what a statement near the cap allocated, so after such a
    statement reading every row for the diff used to fail with an empty MemoryError ("the reply
    could not be sent: "). Runs in a child process, since it lowers RLIMIT_AS.
    """
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _ROOM_SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
