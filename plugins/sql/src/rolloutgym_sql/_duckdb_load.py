"""Loading a source into DuckDB: the SQLite image converted once per process into Arrow tables
with DuckDB types (a load plan), bulk-loaded into an episode's instance, or written once into
a read-only database file in this process's (or the parent's) files folder."""

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

from ._results import Limits
from ._schema import ForeignKey, quote
from ._sources import DatabaseSource

__all__ = ["files_directory", "import_duckdb", "load", "plan_for", "quote", "read_only_file", "set_files_directory"]


_PLANS: dict[str, _LoadPlan] = {}
_PLANS_LOCK = threading.Lock()
_FILES: dict[str, str] = {}
_FILES_DIRECTORY: str | None = None
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
            f"{quote(column.name)} "
            f"{duck_type}{' NOT NULL' if column.not_null and not column.primary_key_position else ''}"
            for column, duck_type in zip(info.columns, types, strict=True)
        ]
        key = info.primary_key
        if key and _unique_key(rows, [names.index(name) for name in key]):
            definitions.append(f"PRIMARY KEY ({', '.join(quote(name) for name in key)})")
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
                f"CREATE TABLE {quote(info.name)} ({', '.join(definitions)})",
                f"INSERT INTO {quote(info.name)} SELECT {selected or '*'} FROM rolloutgym_source_rows",
                arrow_table,
                info.foreign_keys,
                tuple(types),
            )
        )
    return _LoadPlan(tuple(plans))


def _unique_key(rows: list[tuple[Any, ...]], indices: list[int]) -> bool:
    keys = [tuple(row[index] for index in indices) for row in rows]
    return all(None not in key for key in keys) and len(set(keys)) == len(keys)


def load(connection: Any, plan: _LoadPlan) -> None:
    for table in plan.tables:
        connection.execute(table.create_sql)
        connection.register("rolloutgym_source_rows", table.arrow_table)
        try:
            connection.execute(table.insert_sql)
        finally:
            connection.unregister("rolloutgym_source_rows")


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


def read_only_file(source: DatabaseSource, plan: _LoadPlan) -> str:
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
            load(writer, plan)
            writer.execute("CHECKPOINT")
        finally:
            writer.close()
        os.replace(building, path)
    with _PLANS_LOCK:
        _FILES[key] = path
    return path


def plan_for(source: DatabaseSource) -> _LoadPlan:
    key = source.cache_key()
    with _PLANS_LOCK:
        plan = _PLANS.get(key)
    if plan is None:
        plan = _build_plan(source)
        with _PLANS_LOCK:
            _PLANS[key] = plan
    return plan
