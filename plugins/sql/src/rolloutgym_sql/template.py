"""The ``sql`` template: compile a declarative ``Environment(template="sql", ...)`` into SqlEnv factories.

The environment is read duck-typed (attributes ``slug``, ``name``, ``description``,
``schema``, ``seed``, ``config``, ``tasks``), as the rollout SDK defines it::

    env = Environment(slug="library", name="Library", template="sql",
                      schema="CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, year INTEGER);",
                      seed="INSERT INTO books VALUES (1, 'Dune', 1965), (2, 'Emma', 1815);",
                      tasks=[Task(instruction="How many books were published before 1900?",
                                  hidden_ground_truth={"sql": "SELECT COUNT(*) FROM books WHERE year < 1900"})])

``schema``/``seed`` may also be given in ``config`` (``config={"schema": ..., "seed": ...}``, as
the SDK's templates table writes it). Instead of them an existing SQLite file may be given as
``database`` (an attribute, or ``config={"database": PATH}``). ``hidden_ground_truth`` keys:

* ``sql`` (or ``gold_sql``, ``query``): the gold query of a question, or a list of statements
  for a data-changing task;
* ``result`` (or ``expected_result``, or the SDK's ``answer``): the expected rows (or one
  value), when there is no gold query;
* ``end_state`` (or ``expected_state``): for a data-changing task without gold statements,
  the expected rows of some tables, ``{"books": [{"id": 1, "title": "Emma"}, ...]}`` (only
  those tables and the columns named in the rows are compared; the oracle cannot play it);
* ``changes_data``: true for a data-changing task (implied by a list of statements or by a
  gold statement that is not a query); graded by the database diff;
* ``ordered``, ``column_order`` (``any``/``strict``), ``column_names`` (``ignore``/``match``),
  ``rel_tol``, ``abs_tol``: how strictly the result must match.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from rolloutgym_protocol.errors import EnvFileError

from ._compare import MatchOptions
from ._results import Limits
from ._sources import DatabaseSource, SqliteFileSource, SqlScriptSource
from ._tasks import SqlTask
from .envs import SqlEnv

__all__ = ["compile_sql", "task_from_declarative"]

_QUERY_START = re.compile(r"^\s*(\(|select\b|with\b|values\b)", re.IGNORECASE)
_GOLD_KEYS = ("sql", "gold_sql", "query")
_RESULT_KEYS = ("result", "expected_result", "answer")
_STATE_KEYS = ("end_state", "expected_state")
_MATCH_KEYS = ("ordered", "column_order", "column_names", "rel_tol", "abs_tol")


def _field(item: Any, name: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


def _source(environment: Any, label: str) -> DatabaseSource:
    config = _field(environment, "config") or {}
    database = _field(environment, "database") or (config.get("database") if isinstance(config, Mapping) else None)
    schema, seed = _field(environment, "schema"), _field(environment, "seed")
    if isinstance(config, Mapping):  # the SDK's templates table puts schema/seed in config
        schema = schema if schema is not None else config.get("schema")
        seed = seed if seed is not None else config.get("seed")
    if database:
        if schema:
            raise EnvFileError(f"sql environment {label}: give either schema (+ seed) or a database file, not both")
        return SqliteFileSource(str(database))
    if not isinstance(schema, str) or not schema.strip():
        raise EnvFileError(
            f"sql environment {label}: the 'sql' template needs schema= (CREATE TABLE statements) and optionally seed= "
            "(INSERT statements), or a SQLite database file (database=PATH)"
        )
    if seed is not None and not isinstance(seed, str):
        raise EnvFileError(
            f"sql environment {label}: seed must be a string of INSERT statements, got {type(seed).__name__}"
        )
    source = SqlScriptSource(schema, seed, name=label.strip("'"))
    source.sqlite_image()  # fail now, with the database's message, if the DDL or seed is broken
    return source


def task_from_declarative(task: Any, index: int, *, label: str = "env") -> SqlTask:
    """Turn an SDK ``Task`` (instruction, hidden_ground_truth, input, split) into a :class:`SqlTask`."""
    if isinstance(task, SqlTask):
        return task
    instruction = _field(task, "instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise EnvFileError(f"sql environment {label}: task {index} needs a non-empty instruction")
    truth = _field(task, "hidden_ground_truth") or _field(task, "hiddenGroundTruth") or {}
    if not isinstance(truth, Mapping):
        raise EnvFileError(
            f"sql environment {label}: task {index}: hidden_ground_truth must be an object, got {type(truth).__name__}"
        )
    gold = next((truth[key] for key in _GOLD_KEYS if truth.get(key) is not None), None)
    expected = next((truth[key] for key in _RESULT_KEYS if truth.get(key) is not None), None)
    end_state = next((truth[key] for key in _STATE_KEYS if truth.get(key) is not None), None)
    if end_state is not None and (
        not isinstance(end_state, Mapping)
        or not all(
            isinstance(rows, list) and all(isinstance(row, Mapping) for row in rows) for rows in end_state.values()
        )
    ):
        raise EnvFileError(
            f"sql environment {label}: task {index}: hidden_ground_truth['end_state'] must map table names to lists of "
            "row objects, e.g. {'books': [{'id': 1, 'title': 'Emma'}]}"
        )
    if gold is None and expected is None and end_state is None:
        raise EnvFileError(
            f"sql environment {label}: task {index} ({instruction[:60]!r}) has no ground truth; put the gold SQL in "
            "hidden_ground_truth={'sql': 'SELECT ...'} (or the expected rows in {'result': [[...], ...]}, or one "
            "value in {'answer': ...})"
        )
    statements: tuple[str, ...] = ()
    if gold is not None:
        if isinstance(gold, str):
            statements = (gold,)
        elif isinstance(gold, (list, tuple)) and all(isinstance(item, str) for item in gold) and gold:
            statements = tuple(gold)
        else:
            raise EnvFileError(
                f"sql environment {label}: task {index}: hidden_ground_truth['sql'] must be a string or a list of "
                "strings"
            )
    changes = truth.get("changes_data")
    if changes is None:
        changes = (
            end_state is not None
            or len(statements) > 1
            or any(not _QUERY_START.match(statement) for statement in statements)
        )
    match_arguments = {key: truth[key] for key in _MATCH_KEYS if key in truth}
    try:
        match = MatchOptions(**match_arguments)
    except (TypeError, ValueError) as exc:
        raise EnvFileError(f"sql environment {label}: task {index}: {exc}") from None
    rows = None
    if expected is not None:
        if not isinstance(expected, list):
            expected = [[expected]]
        rows = tuple(tuple(row) if isinstance(row, (list, tuple)) else (row,) for row in expected)
    extra = _field(task, "input")
    if extra:
        instruction = f"{instruction}\n\nInput:\n{json.dumps(extra, indent=2, default=str)}"
    identifier = _field(task, "id") or f"task-{index:03d}"
    split = _field(task, "split") or "dev"
    try:
        return SqlTask(
            str(identifier),
            instruction,
            str(split),
            gold_sql=statements,
            expected_rows=rows,
            changes_data=bool(changes),
            match=match,
            expected_tables={str(table): tuple(dict(row) for row in rows) for table, rows in end_state.items()}
            if end_state
            else None,
        )
    except ValueError as exc:
        raise EnvFileError(f"sql environment {label}: {exc}") from None


def compile_sql(environment: Any) -> Callable[..., SqlEnv]:
    """Compile a declarative ``sql`` environment into ``factory(task, **kwargs) -> SqlEnv``.

    The factory accepts a task (an SDK ``Task``, a :class:`SqlTask` or a task index) and the
    keyword arguments ``backend`` (``"sqlite"``/``"duckdb"``) and ``statement_seconds``.
    """
    slug = _field(environment, "slug") or _field(environment, "name") or "sql-env"
    label = repr(str(slug))
    template = _field(environment, "template", "sql")
    if template != "sql":
        raise EnvFileError(f"environment {label} has template {template!r}; compile_sql compiles only template='sql'")
    source = _source(environment, label)
    declared = list(_field(environment, "tasks") or [])
    compiled = [task_from_declarative(task, index, label=label) for index, task in enumerate(declared)]
    name = str(_field(environment, "name") or slug)
    description = _field(environment, "description") or ""
    digest = hashlib.sha256(source.key.encode()).hexdigest()[:8]
    by_identity = {id(task): compiled[index] for index, task in enumerate(declared)}

    def factory(task: Any = None, *, backend: str = "sqlite", statement_seconds: float | None = None) -> SqlEnv:
        if task is None:
            if not compiled:
                raise EnvFileError(
                    f"sql environment {label} has no tasks; add Task(instruction=..., hidden_ground_truth={{'sql': "
                    "...})"
                )
            chosen = compiled[0]
        elif isinstance(task, int) and not isinstance(task, bool):
            chosen = compiled[task]
        elif id(task) in by_identity:
            chosen = by_identity[id(task)]
        else:
            chosen = task_from_declarative(task, len(compiled), label=label)
        limits = Limits() if statement_seconds is None else Limits(statement_seconds=float(statement_seconds))
        return SqlEnv(chosen, source=source, backend=backend, limits=limits, name=name, description=str(description))

    factory.tasks = compiled  # type: ignore[attr-defined]
    factory.source_digest = digest  # type: ignore[attr-defined]
    return factory
