"""The DuckDB backend (extra ``rolloutgym-sql[duckdb]``): one private in-memory database per episode.

The source's SQLite image is converted once per process into Arrow tables with DuckDB
types (``INTEGER`` -> ``BIGINT``, ``REAL`` -> ``DOUBLE``, ``DATE`` -> ``DATE``, ...;
:mod:`rolloutgym_sql._duckdb_load`); each episode creates a fresh in-memory DuckDB instance and
bulk-loads them. Then the instance is locked down: no file system access (so no ATTACH of files,
COPY, ``read_csv``), no extension installing or autoloading, configuration locked, one thread, a
memory limit. Every statement is parsed first and only queries (and, in read-write tasks, data
and schema changes) may run; a timer interrupts a statement after ``Limits.statement_seconds``.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from ._duckdb_load import import_duckdb, load, plan_for, read_only_file
from ._results import Limits, QueryResult, StatementError, table_columns
from ._schema import ColumnInfo, TableContents, TableInfo, quote, table_contents
from ._sources import DatabaseSource

__all__ = ["DuckDBSession"]

# The catalog name of a read-only task's attached database (shown in DuckDB's messages).
_READ_ONLY_CATALOG = "task_data"
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^)]*\)\s*)?", re.IGNORECASE)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DuckDBSession:
    """One episode's private DuckDB database (same interface as ``SqliteSession``)."""

    backend = "duckdb"
    dialect = "DuckDB"

    def __init__(self, source: DatabaseSource, *, read_only: bool, limits: Limits) -> None:
        duckdb = import_duckdb()
        self._duckdb = duckdb
        self.read_only = read_only
        self.limits = limits
        plan = plan_for(source)
        memory_mb = max(64, min(limits.max_database_bytes // (1024 * 1024) * 2, 2048))
        memory_mb = min(memory_mb, max(64, limits.memory_bytes // (1024 * 1024) // 2))
        connection = duckdb.connect(
            ":memory:",
            config={
                "threads": 1,
                "memory_limit": f"{memory_mb}MB",
                "max_temp_directory_size": "0B",
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
                "allow_community_extensions": False,
                "allow_unsigned_extensions": False,
            },
        )
        try:
            if read_only:
                # Read-only is enforced by the storage, not by recognising statements: the
                # task's data is a database file attached READ_ONLY, so no statement form
                # (EXPLAIN ANALYZE <write>, a macro, a CTE...) can change it.
                path = read_only_file(source, plan)
                connection.execute(f"ATTACH {_literal(path)} AS {_READ_ONLY_CATALOG} (READ_ONLY)")
                connection.execute(f"USE {_READ_ONLY_CATALOG}")
            else:
                load(connection, plan)
            connection.execute("SET enable_external_access = false")
            connection.execute("SET lock_configuration = true")
        except BaseException:
            connection.close()
            raise
        self._foreign_keys = {table.name: table.foreign_keys for table in plan.tables}
        self._connection: Any = connection
        #: The last statement may have changed data or schema (replayed after a worker restart).
        self.last_statement_wrote = False

    @property
    def connection(self) -> Any:
        if self._connection is None:
            raise StatementError("the database session is closed")
        return self._connection

    def _allowed_types(self) -> set[str]:
        allowed = {"SELECT", "EXPLAIN"}
        if not self.read_only:
            allowed |= {"INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "TRANSACTION", "MERGE_INTO"}
        return allowed

    def _explained_kind(self, sql: str) -> str:
        """The statement type under ``EXPLAIN [ANALYZE]`` ("EXPLAIN" when it may run)."""
        inner = _EXPLAIN.sub("", sql, count=1)
        try:
            statements = self._duckdb.extract_statements(inner)
        except self._duckdb.Error:
            return "EXPLAIN"  # DuckDB will report the syntax error itself
        if len(statements) != 1:
            return "EXPLAIN"
        kind = statements[0].type.name
        return "EXPLAIN" if kind in self._allowed_types() else kind

    def execute(self, sql: str, *, max_rows: int) -> QueryResult:
        """Run one statement; raise :class:`StatementError` with the database's message on failure."""
        if not isinstance(sql, str):
            raise StatementError(f"the SQL must be a string, got {type(sql).__name__}")
        if not sql.strip():
            raise StatementError("the SQL is empty; pass one SQL statement")
        try:
            sql.encode("utf-8")
        except UnicodeEncodeError:
            raise StatementError(
                "the SQL is not valid UTF-8 text (it contains an unpaired surrogate); resend it as plain text"
            ) from None
        duckdb = self._duckdb
        try:
            statements = duckdb.extract_statements(sql)
        except duckdb.Error as exc:
            raise StatementError(_message(exc)) from None
        if len(statements) != 1:
            raise StatementError(
                "run one SQL statement per call: this call contains "
                f"{len(statements)} statements. Send them in separate calls."
                if statements
                else "the SQL contains no statement"
            )
        kind = statements[0].type.name
        if kind == "EXPLAIN":
            kind = self._explained_kind(sql)
        if kind not in self._allowed_types():
            if self.read_only and kind in {"INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "TRANSACTION"}:
                raise StatementError("this task is read-only: only SELECT queries are allowed")
            raise StatementError(
                f"not authorized: {kind} statements are not allowed (the episode works on its own database only)"
            )
        self.last_statement_wrote = kind != "SELECT" and not self.read_only
        connection = self.connection
        timer = threading.Timer(self.limits.statement_seconds, connection.interrupt)
        timer.daemon = True
        timer.start()
        try:
            connection.execute(sql)
            if kind in {"INSERT", "UPDATE", "DELETE", "MERGE_INTO"}:
                row = connection.fetchone()
                return QueryResult((), [], changed_rows=int(row[0]) if row else 0, returns_rows=False)
            if kind not in {"SELECT", "EXPLAIN"} or connection.description is None:
                return QueryResult((), [], returns_rows=False)
            columns = table_columns(description[0] for description in connection.description)
            rows = connection.fetchmany(max_rows + 1)
            return QueryResult(columns, [tuple(row) for row in rows[:max_rows]], truncated=len(rows) > max_rows)
        except duckdb.InterruptException:
            raise StatementError(
                f"the statement ran longer than {self.limits.statement_seconds:g} s and was stopped; simplify the "
                "query or add conditions"
            ) from None
        except duckdb.Error as exc:
            message = _message(exc)
            if "attached in read-only mode" in message:
                message = "this task is read-only: only SELECT queries are allowed"
            raise StatementError(message) from None
        except (OverflowError, MemoryError, UnicodeError, ValueError) as exc:
            raise StatementError(f"{type(exc).__name__}: {exc}") from None
        finally:
            timer.cancel()
            timer.join()

    def _rows(self, sql: str, parameters: list[Any] | None = None) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in self.connection.execute(sql, parameters or []).fetchall()]

    def tables(self) -> list[TableInfo]:
        """Every user table with columns, keys and row count."""
        result = []
        names = self._rows(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND NOT temporary ORDER BY table_name"
        )
        for (name,) in names:
            key_rows = self._rows(
                "SELECT constraint_column_names FROM duckdb_constraints() "
                "WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ? "
                "AND constraint_type = 'PRIMARY KEY'",
                [name],
            )
            key = list(key_rows[0][0]) if key_rows else []
            columns = tuple(
                ColumnInfo(column, str(data_type), not bool(nullable), key.index(column) + 1 if column in key else 0)
                for column, data_type, nullable in self._rows(
                    "SELECT column_name, data_type, is_nullable FROM duckdb_columns() "
                    "WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ? "
                    "ORDER BY column_index",
                    [name],
                )
            )
            count = self._rows(f"SELECT count(*) FROM {quote(name)}")[0][0]
            result.append(TableInfo(name, columns, self._foreign_keys.get(name, ()), int(count)))
        return result

    def contents(self) -> dict[str, TableContents]:
        """Every row of every user table (for the database diff)."""
        return table_contents(self.tables(), self._rows)

    def close(self) -> None:
        """Release the database (idempotent)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _message(exc: Exception) -> str:
    text = str(exc).strip()
    return text.replace("\n\n", "\n") or type(exc).__name__
