"""Query results, the limits that bound them, and their rendering as a readable table."""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Limits", "QueryResult", "StatementError", "format_result", "normalise_value"]


class StatementError(Exception):
    """A statement was refused or failed; the message is written for the agent.

    Raised by backend sessions and turned into a ``{"role": "tool", "content": "error: ..."}``
    observation by the environment; it never escapes an episode.
    """


@dataclass(frozen=True)
class Limits:
    """Safety and size limits of one episode's database session.

    Attributes:
        statement_seconds: wall-clock limit of one statement; longer ones are interrupted.
        display_rows: rows shown by ``run_sql`` before the result is cut with a note.
        display_cell_chars: characters shown per cell before it is cut with ``…``.
        display_bytes: bytes of the rendered table before it is cut with a note.
        grading_rows: rows fetched from a submitted query; more fails the task.
        max_database_bytes: size an episode's database may grow to (SQLite page cap).
        memory_bytes: memory one episode's database worker may allocate beyond its start-up
            size; a statement that needs more fails with a tool error.
    """

    statement_seconds: float = 5.0
    display_rows: int = 50
    display_cell_chars: int = 200
    display_bytes: int = 8_000
    grading_rows: int = 100_000
    max_database_bytes: int = 256 * 1024 * 1024
    memory_bytes: int = 1024 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in (
            "statement_seconds",
            "display_rows",
            "display_cell_chars",
            "display_bytes",
            "grading_rows",
            "memory_bytes",
        ):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")


@dataclass(frozen=True)
class QueryResult:
    """What one statement produced.

    Attributes:
        columns: result column names (empty for statements that return no rows).
        rows: the fetched rows (at most the requested cap).
        truncated: the statement produced more rows than were fetched.
        changed_rows: rows inserted/updated/deleted by a data-changing statement, else None.
        returns_rows: the statement is a query (it has result columns).
    """

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    changed_rows: int | None = None
    returns_rows: bool = True


def normalise_value(value: Any) -> Any:
    """Map backend values onto comparable Python values (dates to ISO text, decimals to float)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    return value


def _cell(value: Any, width: int) -> str:
    kind = type(value)
    if kind is str:
        text = value
    elif kind is int:
        text = str(value)
    elif kind is float:
        text = repr(value) if math.isfinite(value) else str(value)
    elif value is None:
        text = "NULL"
    else:
        value = normalise_value(value)
        if isinstance(value, float):
            text = repr(value) if math.isfinite(value) else str(value)
        elif isinstance(value, bytes):
            text = f"<blob {len(value)} bytes>"
        else:
            text = str(value)
    if "\n" in text or "\r" in text or "\t" in text:
        text = text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", " ")
    if len(text) > width:
        text = text[: max(width - 1, 1)] + "…"
    return text


def format_result(result: QueryResult, limits: Limits) -> str:
    """Render a result as an aligned text table with a row count, cut to the display limits."""
    if not result.returns_rows:
        if result.changed_rows is not None and result.changed_rows >= 0:
            return f"OK: {result.changed_rows} row{'s' if result.changed_rows != 1 else ''} changed."
        return "OK."
    shown = result.rows[: limits.display_rows]
    header = [_cell(name, limits.display_cell_chars) for name in result.columns]
    body = [[_cell(value, limits.display_cell_chars) for value in row] for row in shown]
    widths = [max(map(len, column)) for column in zip(header, *body, strict=True)] if header else []
    lines = [" | ".join(map(str.ljust, header, widths)).rstrip()]
    lines.append("-+-".join("-" * width for width in widths))
    output_size = sum(len(line) + 1 for line in lines)
    cut_by_bytes = False
    written = 0
    for row in body:
        line = " | ".join(map(str.ljust, row, widths)).rstrip()
        size = (len(line) if line.isascii() else len(line.encode("utf-8", "replace"))) + 1
        if output_size + size > limits.display_bytes:
            cut_by_bytes = True
            break
        lines.append(line)
        output_size += size
        written += 1
    more_rows = result.truncated or len(result.rows) > len(shown)
    if cut_by_bytes or more_rows:
        total = "more" if result.truncated else str(len(result.rows))
        lines.append(
            f"(showing the first {written} rows of {total}; the result was cut to "
            f"{limits.display_rows} rows / {limits.display_bytes} bytes — add LIMIT, filter or aggregate)"
        )
    else:
        lines.append(f"({written} row{'s' if written != 1 else ''})")
    return "\n".join(lines)


def table_columns(columns: Sequence[str]) -> tuple[str, ...]:
    """Column names as a tuple of str."""
    return tuple(str(name) for name in columns)
