"""The DuckDB backend (extra ``rolloutgym-sql[duckdb]``): one private in-memory database per episode.

The source's SQLite image is converted once per process into Arrow tables with DuckDB
types (``INTEGER`` -> ``BIGINT``, ``REAL`` -> ``DOUBLE``, ``DATE`` -> ``DATE``, ...); each
episode creates a fresh in-memory DuckDB instance and bulk-loads them. Then the instance is
locked down: no file system access (so no ATTACH of files, COPY, ``read_csv``), no extension
installing or autoloading, configuration locked, one thread, a memory limit. Every statement
is parsed first and only queries (and, in read-write tasks, data and schema changes) may run;
a timer interrupts a statement after ``Limits.statement_seconds``.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym_protocol.errors import ConfigError

from ._results import Limits, QueryResult, StatementError, table_columns
from ._schema import ColumnInfo, ForeignKey, TableContents, TableInfo
from ._sources import DatabaseSource

__all__ = ["DuckDBSession", "import_duckdb"]

_PLANS: dict[str, _LoadPlan] = {}
_PLANS_LOCK = threading.Lock()
_FILES: dict[str, str] = {}
_FILES_DIRECTORY: str | None = None
# The catalog name of a read-only task's attached database (shown in DuckDB's messages).
_READ_ONLY_CATALOG = "task_data"
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^)]*\)\s*)?", re.IGNORECASE)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")


def import_duckdb() -> Any:
    """Import duckdb and pyarrow, or explain how to install them."""
    try:
        import duckdb
        import pyarrow
    except ImportError as exc:
        raise ConfigError(
            f"the DuckDB backend needs the 'duckdb' extra ({exc.name} is not installed): "
            f"{pip_install('rolloutgym-sql', 'duckdb')}, or use the default backend ('sqlite')"
        ) from None
    del pyarrow
    return duckdb


@dataclass(frozen=True)
class _TablePlan:
    name: str
    create_sql: str
    insert_sql: str
    arrow_table: Any
    foreign_keys: tuple[ForeignKey, ...]
    declared_types: tuple[str, ...]


@dataclass(frozen=True)
class _LoadPlan:
    tables: tuple[_TablePlan, ...]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _duckdb_type(declared: str, values: list[Any]) -> str:
    """DuckDB type for a SQLite column, checked against the values it actually holds."""
    upper = declared.upper()
    present = [value for value in values if value is not None]
    if "INT" in upper:
        wanted = "BIGINT"
    elif any(part in upper for part in ("CHAR", "CLOB", "TEXT")):
        wanted = "VARCHAR"
    elif upper == "DATE":
        wanted = "DATE"
    elif "DATETIME" in upper or "TIMESTAMP" in upper:
        wanted = "TIMESTAMP"
    elif "BOOL" in upper:
        wanted = "BOOLEAN"
    elif any(part in upper for part in ("REAL", "FLOA", "DOUB", "NUMERIC", "DECIMAL")):
        wanted = "DOUBLE"
    elif "BLOB" in upper:
        wanted = "BLOB"
    else:  # no declared type: infer from the values
        if present and all(isinstance(value, int) for value in present):
            wanted = "BIGINT"
        elif present and all(isinstance(value, (int, float)) for value in present):
            wanted = "DOUBLE"
        else:
            wanted = "VARCHAR"
    checks = {
        "BIGINT": lambda value: isinstance(value, int) and -(2**63) <= value < 2**63,
        "DOUBLE": lambda value: isinstance(value, (int, float)),
        "BOOLEAN": lambda value: isinstance(value, int) and value in (0, 1),
        "DATE": lambda value: isinstance(value, str) and bool(_DATE.match(value)),
        "TIMESTAMP": lambda value: isinstance(value, str) and bool(_TIMESTAMP.match(value)),
        "BLOB": lambda value: isinstance(value, bytes),
        "VARCHAR": lambda value: True,
    }
    if all(checks[wanted](value) for value in present):
        return wanted
    if wanted == "BIGINT" and all(isinstance(value, (int, float)) for value in present):
        return "DOUBLE"
    return "VARCHAR"


def _arrow_column(duck_type: str, values: list[Any]) -> Any:
    import pyarrow

    if duck_type == "BIGINT":
        return pyarrow.array(values, type=pyarrow.int64())
    if duck_type == "DOUBLE":
        return pyarrow.array([None if value is None else float(value) for value in values], type=pyarrow.float64())
    if duck_type == "BOOLEAN":
        return pyarrow.array([None if value is None else bool(value) for value in values], type=pyarrow.bool_())
    if duck_type == "BLOB":
        return pyarrow.array(values, type=pyarrow.binary())
    converted = [
        None if value is None else (value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value))
        for value in values
    ]
    return pyarrow.array(converted, type=pyarrow.string())


def _build_plan(source: DatabaseSource) -> _LoadPlan:
    import pyarrow

    from ._sqlite import SqliteSession

    reader = SqliteSession(source, read_only=True, limits=Limits())
    try:
        infos = reader.tables()
        contents = reader.contents()
    finally:
        reader.close()
    plans = []
    for info in infos:
        rows = contents[info.name].rows
        names = [column.name for column in info.columns]
        columns_values = [[row[index] for row in rows] for index in range(len(names))]
        types = [_duckdb_type(column.type, values) for column, values in zip(info.columns, columns_values, strict=True)]
        definitions = [
            f"{_quote(column.name)} "
            f"{duck_type}{' NOT NULL' if column.not_null and not column.primary_key_position else ''}"
            for column, duck_type in zip(info.columns, types, strict=True)
        ]
        key = info.primary_key
        if key and _unique_key(rows, [names.index(name) for name in key]):
            definitions.append(f"PRIMARY KEY ({', '.join(_quote(name) for name in key)})")
        arrow_table = pyarrow.table(
            {
                f"c{index}": _arrow_column(duck_type, values)
                for index, (duck_type, values) in enumerate(zip(types, columns_values, strict=True))
            }
        )
        selected = ", ".join(
            f"CAST(c{index} AS {duck_type})" if duck_type in ("DATE", "TIMESTAMP") else f"c{index}"
            for index, duck_type in enumerate(types)
        )
        plans.append(
            _TablePlan(
                info.name,
                f"CREATE TABLE {_quote(info.name)} ({', '.join(definitions)})",
                f"INSERT INTO {_quote(info.name)} SELECT {selected or '*'} FROM rolloutgym_source_rows",
                arrow_table,
                info.foreign_keys,
                tuple(types),
            )
        )
    return _LoadPlan(tuple(plans))


def _unique_key(rows: list[tuple[Any, ...]], indices: list[int]) -> bool:
    keys = [tuple(row[index] for index in indices) for row in rows]
    return all(None not in key for key in keys) and len(set(keys)) == len(keys)


def _load(connection: Any, plan: _LoadPlan) -> None:
    for table in plan.tables:
        connection.execute(table.create_sql)
        connection.register("rolloutgym_source_rows", table.arrow_table)
        try:
            connection.execute(table.insert_sql)
        finally:
            connection.unregister("rolloutgym_source_rows")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def files_directory() -> str:
    """This process's folder for read-only database files (removed at exit).

    A worker process is given its parent's folder (``set_files_directory``), so a killed
    worker leaves nothing behind.
    """
    global _FILES_DIRECTORY
    with _PLANS_LOCK:
        if _FILES_DIRECTORY is None:
            _FILES_DIRECTORY = tempfile.mkdtemp(prefix="rolloutgym-sql-")
            atexit.register(shutil.rmtree, _FILES_DIRECTORY, True)
        return _FILES_DIRECTORY


def set_files_directory(path: str) -> None:
    """Use ``path`` (owned and removed by another process) for read-only database files."""
    global _FILES_DIRECTORY
    with _PLANS_LOCK:
        _FILES_DIRECTORY = path


def _read_only_file(source: DatabaseSource, plan: _LoadPlan) -> str:
    """A DuckDB file holding the source's data, written once per source and folder."""
    key = source.cache_key()
    with _PLANS_LOCK:
        path = _FILES.get(key)
    if path is not None and os.path.exists(path):
        return path
    path = os.path.join(files_directory(), f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.duckdb")
    if not os.path.exists(path):
        # Built under a private name and renamed, so processes sharing the folder never see
        # a half-written file.
        building = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        duckdb = import_duckdb()
        writer = duckdb.connect(building, config={"threads": 1})
        try:
            _load(writer, plan)
            writer.execute("CHECKPOINT")
        finally:
            writer.close()
        os.replace(building, path)
    with _PLANS_LOCK:
        _FILES[key] = path
    return path


def _plan_for(source: DatabaseSource) -> _LoadPlan:
    key = source.cache_key()
    with _PLANS_LOCK:
        plan = _PLANS.get(key)
    if plan is None:
        plan = _build_plan(source)
        with _PLANS_LOCK:
            _PLANS[key] = plan
    return plan


class DuckDBSession:
    """One episode's private DuckDB database (same interface as ``SqliteSession``)."""

    backend = "duckdb"
    dialect = "DuckDB"

    def __init__(self, source: DatabaseSource, *, read_only: bool, limits: Limits) -> None:
        duckdb = import_duckdb()
        self._duckdb = duckdb
        self.read_only = read_only
        self.limits = limits
        plan = _plan_for(source)
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
                path = _read_only_file(source, plan)
                connection.execute(f"ATTACH {_literal(path)} AS {_READ_ONLY_CATALOG} (READ_ONLY)")
                connection.execute(f"USE {_READ_ONLY_CATALOG}")
            else:
                _load(connection, plan)
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
            count = self._rows(f"SELECT count(*) FROM {_quote(name)}")[0][0]
            result.append(TableInfo(name, columns, self._foreign_keys.get(name, ()), int(count)))
        return result

    def contents(self) -> dict[str, TableContents]:
        """Every row of every user table (for the database diff)."""
        result = {}
        for table in self.tables():
            names = tuple(column.name for column in table.columns)
            rows = self._rows(f"SELECT * FROM {_quote(table.name)}")
            result[table.name] = TableContents(table.name, names, table.primary_key, rows)
        return result

    def close(self) -> None:
        """Release the database (idempotent)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _message(exc: Exception) -> str:
    text = str(exc).strip()
    return text.replace("\n\n", "\n") or type(exc).__name__
