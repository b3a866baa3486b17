"""The questions of ``sql/shop-v0``: natural-language questions with gold SQL.

The questions are data (``data/shop_questions.jsonl``, one object per line: ``id``,
``split``, ``difficulty``, ``skills``, ``instruction``, ``sql`` and ``duckdb_sql``, the
DuckDB spelling where it differs, else null). Ground truth is the gold query's result on a
fresh copy of the shop database (computed at grading time with the same backend). Every
ordered question orders by a unique key, so the order is unambiguous. Splits are assigned in
the data.
"""

from __future__ import annotations

from typing import Any

from ._data_files import read_jsonl

__all__ = ["SHOP_QUESTIONS", "question_rows"]


def question_rows() -> list[dict[str, Any]]:
    """The questions as dicts, as stored."""
    return read_jsonl("shop_questions.jsonl")


# (id, split, difficulty, skills, instruction, gold SQL for SQLite, gold SQL for DuckDB or None)
SHOP_QUESTIONS: list[tuple[str, str, str, tuple[str, ...], str, str, str | None]] = [
    (
        row["id"],
        row["split"],
        row["difficulty"],
        tuple(row["skills"]),
        row["instruction"],
        row["sql"],
        row["duckdb_sql"],
    )
    for row in question_rows()
]
