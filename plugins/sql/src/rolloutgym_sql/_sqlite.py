"""The SQLite backend: one isolated in-memory copy per episode, behind an authorizer.

Safety measures, all per connection:

* the copy is deserialized from the source's cached image, so the source is never touched;
* an authorizer denies ATTACH/DETACH (which also stops ``VACUUM INTO``), every PRAGMA that is
  not an informational one (``writable_schema`` included), ``load_extension`` and virtual
  tables, and in read-only tasks everything but reading;
* extension loading stays disabled; a progress handler interrupts a statement after
  ``Limits.statement_seconds``; results are fetched lazily up to a cap; the database may not
  grow beyond ``Limits.max_database_bytes`` and one value may not exceed 32 MB.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from ._results import Limits, QueryResult, StatementError, table_columns
from ._schema import ColumnInfo, ForeignKey, TableContents, TableInfo, quote, table_contents
from ._sources import DatabaseSource

__all__ = ["SqliteSession"]

# Informational pragmas (read-only, they report the schema); everything else is denied.
_SAFE_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "collation_list",
        "function_list",
        "database_list",
    }
)
_DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})
_READ_CODES = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
)
_ALWAYS_DENIED = {
    sqlite3.SQLITE_ATTACH: "ATTACH (and VACUUM, which attaches a file) is not allowed: the episode works on its own "
    "database only",
    sqlite3.SQLITE_DETACH: "DETACH is not allowed",
    sqlite3.SQLITE_CREATE_VTABLE: "virtual tables are not allowed",
    sqlite3.SQLITE_DROP_VTABLE: "virtual tables are not allowed",
}
_MAX_VALUE_BYTES = 32 * 1024 * 1024
_PROGRESS_OPCODES = 4000


class SqliteSession:
    """One episode's private SQLite database.

    Args:
        source: where the initial database comes from.
        read_only: deny every statement that changes data or schema.
        limits: time and size limits.
    """

    backend = "sqlite"
    dialect = "SQLite"

    def __init__(self, source: DatabaseSource, *, read_only: bool, limits: Limits) -> None:
        self.read_only = read_only
        self.limits = limits
        self._trusted = True
        #: The last statement may have changed data or schema (replayed after a worker restart).
        self.last_statement_wrote = False
        self._denied: str | None = None
        self._deadline = float("inf")
        image = source.sqlite_image()
        connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            connection.deserialize(image)
            page_size = connection.execute("PRAGMA page_size").fetchone()[0]
            pages = max(limits.max_database_bytes // page_size, len(image) // page_size + 16)
            connection.execute(f"PRAGMA max_page_count = {int(pages)}")
            connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _MAX_VALUE_BYTES)
            connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
            if read_only:
                connection.execute("PRAGMA query_only = ON")
        except BaseException:
            connection.close()
            raise
        connection.set_authorizer(self._authorize)
        connection.set_progress_handler(self._progress, _PROGRESS_OPCODES)
        self._connection: sqlite3.Connection | None = connection
        self._trusted = False

    # -- safety -------------------------------------------------------------------------

    def _authorize(
        self, code: int, first: str | None, second: str | None, database: str | None, trigger: str | None
    ) -> int:
        if self._trusted:
            return sqlite3.SQLITE_OK
        reason = _ALWAYS_DENIED.get(code)
        if reason is None and code == sqlite3.SQLITE_PRAGMA and (first or "").lower() not in _SAFE_PRAGMAS:
            reason = f"PRAGMA {first} is not allowed (only informational pragmas such as table_info are)"
        if reason is None and code == sqlite3.SQLITE_FUNCTION and (second or "").lower() in _DENIED_FUNCTIONS:
            reason = f"the function {second}() is not allowed"
        if reason is None and self.read_only and code not in _READ_CODES and code != sqlite3.SQLITE_PRAGMA:
            reason = "this task is read-only: only SELECT queries are allowed"
        if reason is None:
            if code not in _READ_CODES and code != sqlite3.SQLITE_PRAGMA:
                self.last_statement_wrote = True
            return sqlite3.SQLITE_OK
        self._denied = self._denied or reason
        return sqlite3.SQLITE_DENY

    def _progress(self) -> int:
        return 1 if time.perf_counter() > self._deadline else 0

    @property
    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            raise StatementError("the database session is closed")
        return self._connection

    # -- statements -----------------------------------------------------------------------

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
        connection = self.connection
        self._denied = None
        self.last_statement_wrote = False
        self._deadline = time.perf_counter() + self.limits.statement_seconds
        cursor = connection.cursor()
        try:
            cursor.execute(sql)
            if cursor.description is None:
                return QueryResult((), [], changed_rows=cursor.rowcount, returns_rows=False)
            columns = table_columns(description[0] for description in cursor.description)
            rows = cursor.fetchmany(max_rows + 1)
            truncated = len(rows) > max_rows
            return QueryResult(columns, [tuple(row) for row in rows[:max_rows]], truncated=truncated)
        except sqlite3.ProgrammingError as exc:
            if "one statement at a time" in str(exc):
                raise StatementError(
                    "run one SQL statement per call: this call contains several statements separated by ';'. "
                    "Send them in separate calls."
                ) from None
            raise StatementError(f"{exc}") from None
        except sqlite3.Error as exc:
            raise StatementError(self._explain(exc)) from None
        except (OverflowError, MemoryError, UnicodeError, ValueError) as exc:
            raise StatementError(f"{type(exc).__name__}: {exc}") from None
        finally:
            self._deadline = float("inf")
            cursor.close()

    def _explain(self, exc: sqlite3.Error) -> str:
        message = str(exc)
        if self._denied is not None and ("not authorized" in message or "authorization denied" in message):
            return f"not authorized: {self._denied}"
        if message == "interrupted":
            return (
                f"the statement ran longer than {self.limits.statement_seconds:g} s and was stopped; simplify the "
                "query or add conditions"
            )
        if "attempt to write a readonly database" in message or "query_only" in message:
            return "this task is read-only: only SELECT queries are allowed"
        if "database or disk is full" in message:
            return (
                f"the database would grow beyond {self.limits.max_database_bytes // (1024 * 1024)} MB; the statement "
                "was rolled back"
            )
        return f"{type(exc).__name__.replace('Error', ' error').lower().strip()}: {message}"

    # -- introspection (trusted, not subject to the authorizer) ---------------------------------

    def _trusted_rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        self._trusted = True
        try:
            return [tuple(row) for row in self.connection.execute(sql, parameters).fetchall()]
        finally:
            self._trusted = False

    def _table_names(self) -> list[str]:
        rows = self._trusted_rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY "
            "name"
        )
        return [row[0] for row in rows]

    def tables(self) -> list[TableInfo]:
        """Every user table with columns, keys and row count."""
        tables = []
        for name in self._table_names():
            quoted = quote(name)
            columns = tuple(
                ColumnInfo(row[1], row[2] or "", bool(row[3]), int(row[5]))
                for row in self._trusted_rows(f"PRAGMA table_info({quoted})")
            )
            grouped: dict[int, list[tuple[Any, ...]]] = {}
            for row in self._trusted_rows(f"PRAGMA foreign_key_list({quoted})"):
                grouped.setdefault(row[0], []).append(row)
            keys = tuple(
                ForeignKey(tuple(row[3] for row in rows), rows[0][2], tuple(row[4] or "" for row in rows))
                for _, rows in sorted(grouped.items())
            )
            count = self._trusted_rows(f"SELECT count(*) FROM {quoted}")[0][0]
            tables.append(TableInfo(name, columns, keys, count))
        return tables

    def contents(self) -> dict[str, TableContents]:
        """Every row of every user table (for the database diff)."""
        return table_contents(self.tables(), self._trusted_rows)

    def close(self) -> None:
        """Release the in-memory copy (idempotent)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
