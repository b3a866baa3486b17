"""The task record of SQL environments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._compare import MatchOptions
from ._sources import DatabaseSource

__all__ = ["SqlTask"]


@dataclass(frozen=True)
class SqlTask:
    """One question or data-changing task.

    Attributes:
        id: unique within the environment.
        instruction: what the agent is asked, in words.
        split: ``train``, ``dev`` or ``test``.
        gold_sql: the reference solution: one query for a question, the statements for a
            data-changing task. Ground truth comes from executing it on a fresh copy.
        gold_sql_by_backend: dialect-specific reference solutions (``{"duckdb": (...)}``).
        expected_rows: for questions without gold SQL: the expected result rows.
        expected_columns: column names of ``expected_rows`` (optional).
        changes_data: the task asks to change data (graded by the database diff) rather
            than to answer a question (graded by execution match).
        match: how strictly results and end states must match.
        skills: what the task exercises (``join``, ``window``, ``null-trap``, ...).
        difficulty: ``easy``, ``medium`` or ``hard``.
        database: the task's own database (benchmarks with one database per question);
            None means the environment's database.
        expected_tables: for data-changing tasks without gold SQL: the expected end state of
            some tables, ``{table: [{column: value, ...}, ...]}`` (only those tables, and only
            the columns named in the rows, are compared).
    """

    id: str
    instruction: str
    split: str = "dev"
    gold_sql: tuple[str, ...] = ()
    gold_sql_by_backend: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    expected_rows: tuple[tuple[Any, ...], ...] | None = None
    expected_columns: tuple[str, ...] | None = None
    changes_data: bool = False
    match: MatchOptions = field(default_factory=MatchOptions)
    skills: tuple[str, ...] = ()
    difficulty: str = ""
    database: DatabaseSource | None = None
    expected_tables: Mapping[str, tuple[Mapping[str, Any], ...]] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.gold_sql, str):
            object.__setattr__(self, "gold_sql", (self.gold_sql,))
        by_backend = {
            str(backend): (statements,) if isinstance(statements, str) else tuple(statements)
            for backend, statements in dict(self.gold_sql_by_backend).items()
        }
        object.__setattr__(self, "gold_sql_by_backend", by_backend)
        if not self.gold_sql and self.expected_rows is None and not self.changes_data:
            raise ValueError(f"task {self.id!r}: give gold_sql or expected_rows, so it can be graded")
        if self.changes_data and not self.gold_sql and not self.expected_tables:
            raise ValueError(
                f"task {self.id!r}: a data-changing task needs gold_sql (the statements that make the expected end "
                "state) "
                "or expected_tables"
            )
        if not self.changes_data and len(self.gold_sql) > 1:
            raise ValueError(f"task {self.id!r}: a question has one gold query, got {len(self.gold_sql)} statements")

    def gold_for(self, backend: str) -> tuple[str, ...]:
        """The reference statements for ``backend`` (the dialect-specific ones when given)."""
        return tuple(self.gold_sql_by_backend.get(backend, self.gold_sql))
