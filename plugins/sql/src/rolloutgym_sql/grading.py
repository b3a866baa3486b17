"""Grading SQL tasks: ground truth from executing the gold SQL, execution match, database diff.

Expected results and end states are computed by running the task's gold SQL on a fresh,
pristine copy of the database with the same backend (never on an agent's session, which the
agent may have changed), and cached per process and task.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rolloutgym_protocol import Score
from rolloutgym_protocol.errors import ConfigError

from ._backends import open_session
from ._compare import MatchOptions, compare_results, orders_result
from ._diff import diff_databases
from ._results import Limits, StatementError
from ._schema import TableContents
from ._sources import DatabaseSource
from ._tasks import SqlTask

__all__ = ["expected_result", "expected_state", "grade_changes", "grade_query", "parse_answer_value"]

_CACHE: dict[tuple[Any, ...], Any] = {}
_CACHE_LOCK = threading.Lock()


def _cached(key: tuple[Any, ...], compute: Any) -> Any:
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    value = compute()
    with _CACHE_LOCK:
        _CACHE[key] = value
    return value


def expected_result(
    task: SqlTask, source: DatabaseSource, backend: str, limits: Limits
) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    """The gold query's result on a fresh, pristine copy (or the task's ``expected_rows``)."""
    gold = task.gold_for(backend)
    if not gold:
        rows = [tuple(row) for row in task.expected_rows or ()]
        width = len(rows[0]) if rows else len(task.expected_columns or ())
        columns = tuple(task.expected_columns or (f"column{index + 1}" for index in range(width)))
        return columns, rows

    def compute() -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        # The gold SQL is trusted: it runs in this process, on a copy nobody else touches.
        session = open_session(backend, source, read_only=True, limits=limits, isolated=False)
        try:
            result = session.execute(gold[0], max_rows=limits.grading_rows)
        except StatementError as exc:
            raise ConfigError(
                f"task {task.id!r}: its gold SQL fails on {backend}: {exc}. Fix the task's gold SQL."
            ) from None
        finally:
            session.close()
        if result.truncated:
            raise ConfigError(
                f"task {task.id!r}: its gold SQL returns more than {limits.grading_rows} rows; narrow the question"
            )
        return result.columns, result.rows

    return _cached(("result", source.cache_key(), backend, gold), compute)  # type: ignore[no-any-return]


def expected_state(task: SqlTask, source: DatabaseSource, backend: str, limits: Limits) -> dict[str, TableContents]:
    """The end state after running the gold statements on a fresh copy."""
    gold = task.gold_for(backend)

    def compute() -> dict[str, TableContents]:
        session = open_session(backend, source, read_only=False, limits=limits, isolated=False)
        try:
            for index, statement in enumerate(gold):
                try:
                    session.execute(statement, max_rows=1)
                except StatementError as exc:
                    raise ConfigError(
                        f"task {task.id!r}: gold statement {index + 1} fails on {backend}: {exc}. "
                        "Fix the task's gold SQL."
                    ) from None
            return session.contents()
        finally:
            session.close()

    return _cached(("state", source.cache_key(), backend, gold), compute)  # type: ignore[no-any-return]


def parse_answer_value(answer: Any, width: int) -> list[tuple[Any, ...]]:
    """Turn a submitted final value into result rows.

    Accepts a JSON value (a number, a string, a list of values, a list of rows) or plain
    text; a one-column expected result takes a list of values as its rows.
    """
    value = answer
    if isinstance(answer, str):
        text = answer.strip()
        try:
            value = json.loads(text)
        except ValueError:
            value = text
    if isinstance(value, dict):
        value = [list(value.values())]
    if not isinstance(value, list):
        return [(_scalar(value),)]
    if all(isinstance(item, list) for item in value) and value:
        return [tuple(_scalar(cell) for cell in item) for item in value]
    if width == 1:
        return [(_scalar(item),) for item in value]
    return [tuple(_scalar(item) for item in value)]


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return float(text.replace(",", "")) if text else text
        except ValueError:
            return text
    return value


def grade_query(
    task: SqlTask,
    *,
    session: Any,
    source: DatabaseSource,
    backend: str,
    limits: Limits,
    sql: str | None,
    answer: Any,
) -> Score:
    """Execution match of a submitted query (or value) against the gold result.

    Components: ``executes`` (the submitted SQL ran) and ``result_match``; the score is
    ``result_match``.
    """
    columns, rows = expected_result(task, source, backend, limits)
    ordered = task.match.ordered
    gold = task.gold_for(backend)
    if ordered is None:
        ordered = bool(gold) and orders_result(gold[0])
    metadata: dict[str, Any] = {"backend": backend, "expected_rows": len(rows), "ordered": ordered}
    if sql is None and (answer is None or (isinstance(answer, str) and not answer.strip())):
        feedback = (
            "no answer was submitted: call submit_answer with the final SQL query (sql) or the final value (answer)"
        )
        return _zero(metadata, Score(0.0, feedback=feedback), feedback, feedback)
    if sql is not None:
        submitted = _run_submitted_sql(task, session, sql, limits, len(rows), metadata)
        if isinstance(submitted, Score):
            return submitted
    else:
        submitted = _submitted_value(task, answer, columns)
    metadata["submitted_rows"] = len(submitted.rows)
    comparison = compare_results(
        columns, rows, submitted.columns, submitted.rows, options=submitted.options, ordered=ordered
    )
    value = 1.0 if comparison.match else 0.0
    return Score(
        value,
        {"executes": submitted.executes, "result_match": Score(value, feedback=comparison.feedback)},
        metadata,
        feedback=comparison.feedback,
    )


@dataclass(frozen=True)
class _Submitted:
    """What a submission is compared as: its columns and rows, how it ran, the match options."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    executes: Score
    options: MatchOptions


def _zero(metadata: dict[str, Any], executes: Score, result_feedback: str, feedback: str) -> Score:
    """A zero score: ``executes`` as given, ``result_match`` 0 with ``result_feedback``."""
    return Score(
        0.0,
        {"executes": executes, "result_match": Score(0.0, feedback=result_feedback)},
        metadata,
        feedback=feedback,
    )


def _run_submitted_sql(
    task: SqlTask, session: Any, sql: str, limits: Limits, expected_rows: int, metadata: dict[str, Any]
) -> _Submitted | Score:
    """Run the submitted SQL in the agent's session: its result, or the zero score it earns."""
    try:
        result = session.execute(sql, max_rows=limits.grading_rows)
    except StatementError as exc:
        feedback = f"the submitted SQL failed: {exc}"
        return _zero(metadata, Score(0.0, feedback=feedback), "nothing to compare: the SQL failed", feedback)
    ran = Score(1.0, feedback="it ran")
    if not result.returns_rows:
        feedback = "the submitted SQL is not a query: submit the SELECT that answers the question"
        return _zero(metadata, ran, feedback, feedback)
    if result.truncated:
        feedback = (
            f"the submitted query returns more than {limits.grading_rows} rows; the expected result has {expected_rows}"
        )
        return _zero(metadata, ran, feedback, feedback)
    executes = Score(1.0, feedback=f"the submitted SQL ran and returned {len(result.rows)} rows")
    return _Submitted(result.columns, result.rows, executes, task.match)


def _submitted_value(task: SqlTask, answer: Any, columns: tuple[str, ...]) -> _Submitted:
    """A submitted final value as rows, under the expected columns when it has their width."""
    rows = parse_answer_value(answer, len(columns))
    submitted_columns = tuple(columns[: len(rows[0])]) if rows else columns
    if rows and len(rows[0]) != len(columns):
        submitted_columns = tuple(f"value{index + 1}" for index in range(len(rows[0])))
    executes = Score(1.0, feedback="a final value was submitted (no SQL to run)")
    options = MatchOptions(ordered=task.match.ordered, rel_tol=task.match.rel_tol, abs_tol=task.match.abs_tol)
    return _Submitted(submitted_columns, rows, executes, options)


def _listed_tables(
    task: SqlTask, actual: dict[str, TableContents]
) -> tuple[dict[str, TableContents], dict[str, TableContents]]:
    """Expected and actual contents of the tables (and columns) named in ``task.expected_tables``."""
    expected_tables: dict[str, TableContents] = {}
    projected: dict[str, TableContents] = {}
    by_lower = {name.lower(): name for name in actual}
    for table, rows in (task.expected_tables or {}).items():
        found = actual.get(by_lower.get(table.lower(), ""))
        if found is None:
            expected_tables[table] = TableContents(
                table, tuple(rows[0]) if rows else (), (), [tuple(row.values()) for row in rows]
            )
            continue
        lowered = {name.lower(): name for name in found.columns}
        named = [name for name in (rows[0] if rows else found.columns)]
        columns = tuple(lowered.get(str(name).lower(), str(name)) for name in named)
        indices = [found.columns.index(name) if name in found.columns else None for name in columns]
        key = found.primary_key if set(found.primary_key) <= set(columns) else ()
        expected_rows = [tuple(_value(row, name) for name in named) for row in rows]
        actual_rows = [tuple(None if index is None else row[index] for index in indices) for row in found.rows]
        expected_tables[found.name] = TableContents(found.name, columns, key, expected_rows)
        projected[found.name] = TableContents(found.name, columns, key, actual_rows)
    return expected_tables, projected


def _value(row: Any, name: Any) -> Any:
    if isinstance(row, dict):
        return row.get(name)
    raise ConfigError(f"expected_tables rows must be objects {{column: value}}, got {type(row).__name__}")


def grade_changes(
    task: SqlTask,
    *,
    session: Any,
    source: DatabaseSource,
    backend: str,
    limits: Limits,
    failed_changes: int,
    successful_changes: int,
) -> Score:
    """Database diff of the episode's end state against the gold end state.

    Components: ``executes`` (the data-changing statements the agent ran all succeeded; a
    task whose right answer is to change nothing also passes it) and ``database_diff``; the
    score is ``database_diff``.
    """
    actual = session.contents()
    if task.gold_for(backend):
        expected = expected_state(task, source, backend, limits)
    else:
        expected, actual = _listed_tables(task, actual)
    diff = diff_databases(expected, actual, options=task.match)
    value = 1.0 if diff.match else 0.0
    if failed_changes:
        executes = Score(
            0.0 if not successful_changes else 0.5,
            feedback=f"{failed_changes} data-changing statement(s) failed; {successful_changes} succeeded",
        )
    else:
        executes = Score(1.0, feedback=f"{successful_changes} data-changing statement(s) ran without error")
    metadata = {"backend": backend, **diff.counts()}
    return Score(
        value,
        {"executes": executes, "database_diff": Score(value, feedback=diff.feedback)},
        metadata,
        feedback=diff.feedback,
    )
