"""The database diff: compare an episode's end state with the expected end state.

Tables with a primary key are compared row by row by key, so the feedback can say which
row is missing, which is extra and which values changed; tables without one are compared
as multisets of rows. Values compare like query results (NULL-aware, numeric tolerance).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._compare import MatchOptions, _multiset_difference, _render_row, values_equal
from ._results import normalise_value
from ._schema import TableContents

__all__ = ["DatabaseDiff", "TableDiff", "diff_databases"]


@dataclass
class TableDiff:
    """What differs in one table."""

    table: str
    missing: list[tuple[Any, ...]] = field(default_factory=list)
    extra: list[tuple[Any, ...]] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    problem: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.missing or self.extra or self.changed or self.problem)

    def describe(self, columns: tuple[str, ...]) -> str:
        if self.problem:
            return f"{self.table}: {self.problem}"
        parts = []
        if self.missing:
            shown = "; ".join(_render_row(row) for row in self.missing[:3])
            parts.append(
                f"{len(self.missing)} missing row{'s' if len(self.missing) != 1 else ''} (expected but not found), "
                f"e.g. {shown}"
            )
        if self.extra:
            shown = "; ".join(_render_row(row) for row in self.extra[:3])
            parts.append(
                f"{len(self.extra)} extra row{'s' if len(self.extra) != 1 else ''} (found but not expected), e.g. "
                f"{shown}"
            )
        if self.changed:
            shown = "; ".join(self.changed[:3])
            parts.append(f"{len(self.changed)} changed row{'s' if len(self.changed) != 1 else ''}: {shown}")
        return f"{self.table} ({', '.join(columns)}): " + "; ".join(parts)


@dataclass
class DatabaseDiff:
    """The whole diff: ``match`` is True when nothing differs."""

    tables: list[TableDiff]
    feedback: str

    @property
    def match(self) -> bool:
        return all(table.empty for table in self.tables)

    def counts(self) -> dict[str, int]:
        return {
            "missing_rows": sum(len(table.missing) for table in self.tables),
            "extra_rows": sum(len(table.extra) for table in self.tables),
            "changed_rows": sum(len(table.changed) for table in self.tables),
            "table_problems": sum(1 for table in self.tables if table.problem),
        }


def _show(value: Any) -> str:
    value = normalise_value(value)
    return "NULL" if value is None else repr(value)


def _diff_table(expected: TableContents, actual: TableContents, options: MatchOptions) -> TableDiff:
    diff = TableDiff(expected.name)
    if [name.lower() for name in expected.columns] != [name.lower() for name in actual.columns]:
        diff.problem = f"columns changed: expected ({', '.join(expected.columns)}), found ({', '.join(actual.columns)})"
        return diff
    if expected.rows == actual.rows:  # exact equality implies equality within tolerances: the common, fast case
        return diff
    key = expected.primary_key
    if key and set(key) <= set(expected.columns):
        indices = [expected.columns.index(name) for name in key]

        def key_of(row: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(normalise_value(row[index]) for index in indices)

        expected_rows = {key_of(row): row for row in expected.rows}
        actual_rows: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for row in actual.rows:
            if key_of(row) in actual_rows:
                diff.extra.append(row)
            else:
                actual_rows[key_of(row)] = row
        for row_key, row in expected_rows.items():
            found = actual_rows.get(row_key)
            if found is None:
                diff.missing.append(row)
                continue
            if found == row:
                continue
            changes = [
                f"{name} is {_show(got)}, expected {_show(want)}"
                for name, want, got in zip(expected.columns, row, found, strict=True)
                if not values_equal(want, got, options)
            ]
            if changes:
                label = ", ".join(f"{name}={_show(value)}" for name, value in zip(key, row_key, strict=True))
                diff.changed.append(f"{expected.name} {label}: " + ", ".join(changes))
        diff.extra.extend(row for row_key, row in actual_rows.items() if row_key not in expected_rows)
        return diff
    diff.missing, diff.extra = _multiset_difference(list(expected.rows), list(actual.rows), options)
    return diff


def diff_databases(
    expected: Mapping[str, TableContents], actual: Mapping[str, TableContents], *, options: MatchOptions | None = None
) -> DatabaseDiff:
    """Diff two end states (``{table: TableContents}``); the feedback names every difference."""
    options = options or MatchOptions()
    tables: list[TableDiff] = []
    expected_names = {name.lower(): name for name in expected}
    actual_names = {name.lower(): name for name in actual}
    lines = []
    for lowered, name in sorted(expected_names.items()):
        if lowered not in actual_names:
            table = TableDiff(name, problem="the table is missing (it was dropped or renamed)")
        else:
            table = _diff_table(expected[name], actual[actual_names[lowered]], options)
        tables.append(table)
        if not table.empty:
            lines.append(table.describe(expected[name].columns))
    for lowered, name in sorted(actual_names.items()):
        if lowered not in expected_names:
            table = TableDiff(name, problem="an unexpected new table (the task does not ask to create it)")
            tables.append(table)
            lines.append(table.describe(actual[name].columns))
    feedback = (
        "the database matches the expected end state"
        if not lines
        else "the database differs from the expected end state: " + " | ".join(lines)
    )
    return DatabaseDiff(tables, feedback)
