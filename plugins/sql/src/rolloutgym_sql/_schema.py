"""Schema descriptions and table contents, the same shape for every backend."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ColumnInfo", "ForeignKey", "TableContents", "TableInfo", "describe_tables", "quote", "table_contents"]


@dataclass(frozen=True)
class ColumnInfo:
    """One column: name, declared type, NOT NULL, position in the primary key (0 = not in it)."""

    name: str
    type: str
    not_null: bool = False
    primary_key_position: int = 0


@dataclass(frozen=True)
class ForeignKey:
    """``columns`` of this table reference ``referenced_columns`` of ``referenced_table``."""

    columns: tuple[str, ...]
    referenced_table: str
    referenced_columns: tuple[str, ...]


@dataclass(frozen=True)
class TableInfo:
    """A table's columns, keys and row count."""

    name: str
    columns: tuple[ColumnInfo, ...]
    foreign_keys: tuple[ForeignKey, ...] = ()
    row_count: int = 0

    @property
    def primary_key(self) -> tuple[str, ...]:
        keyed = sorted(
            (column.primary_key_position, column.name) for column in self.columns if column.primary_key_position
        )
        return tuple(name for _, name in keyed)


@dataclass(frozen=True)
class TableContents:
    """Every row of a table, for diffing end states."""

    name: str
    columns: tuple[str, ...]
    primary_key: tuple[str, ...]
    rows: list[tuple[Any, ...]] = field(default_factory=list)


def quote(name: str) -> str:
    """A table or column name as a double-quoted SQL identifier (the same in SQLite and DuckDB)."""
    return '"' + name.replace('"', '""') + '"'


def table_contents(
    tables: Iterable[TableInfo], rows: Callable[[str], list[tuple[Any, ...]]]
) -> dict[str, TableContents]:
    """Every row of every table in ``tables`` (for the database diff); ``rows`` runs one trusted query."""
    result = {}
    for table in tables:
        names = tuple(column.name for column in table.columns)
        result[table.name] = TableContents(
            table.name, names, table.primary_key, rows(f"SELECT * FROM {quote(table.name)}")
        )
    return result


def describe_tables(tables: Sequence[TableInfo], *, dialect: str, read_only: bool, only: str | None = None) -> str:
    """The text ``describe_schema`` returns: tables, columns, types, keys and row counts."""
    chosen = [table for table in tables if only is None or table.name.lower() == only.lower()]
    if only is not None and not chosen:
        names = ", ".join(table.name for table in tables) or "none"
        return f"error: no table named {only!r}. Tables: {names}."
    access = "read-only: queries only" if read_only else "read-write: changes are allowed"
    lines = [f"Database: {dialect} ({access}). {len(tables)} table{'s' if len(tables) != 1 else ''}."]
    for table in chosen:
        lines.append("")
        lines.append(f"TABLE {table.name} ({table.row_count} row{'s' if table.row_count != 1 else ''})")
        primary_key = table.primary_key
        for column in table.columns:
            flags = []
            if len(primary_key) == 1 and column.name == primary_key[0]:
                flags.append("PRIMARY KEY")
            if column.not_null and not flags:
                flags.append("NOT NULL")
            lines.append(f"  {column.name} {column.type or 'ANY'}{(' ' + ' '.join(flags)) if flags else ''}".rstrip())
        if len(primary_key) > 1:
            lines.append(f"  PRIMARY KEY ({', '.join(primary_key)})")
        for key in table.foreign_keys:
            lines.append(
                f"  FOREIGN KEY ({', '.join(key.columns)}) REFERENCES "
                f"{key.referenced_table}({', '.join(key.referenced_columns)})"
            )
    return "\n".join(lines)
