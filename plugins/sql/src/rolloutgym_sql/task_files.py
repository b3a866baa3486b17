"""BIRD/Spider-style task files: a questions JSON file plus a folder of SQLite databases (your copies).

Load tasks from Python::

    from rolloutgym_sql import SqlEnv, load_task_file
    tasks = load_task_file("bird/dev.json", "bird/dev_databases")
    env = SqlEnv(tasks[0])

or register copies by path so ``rolloutgym list`` shows them and ``rolloutgym run`` runs them:
write a JSON file and point ``ROLLOUTGYM_SQL_BENCHMARKS`` at it::

    {"bird-dev": {"questions": "bird/dev.json", "databases": "bird/dev_databases", "split": "dev"},
     "spider-dev": {"questions": "spider/dev.json", "databases": "spider/database"}}

    ROLLOUTGYM_SQL_BENCHMARKS=benchmarks.json rolloutgym run sql/bird-dev-v0 --policy oracle

Relative paths are relative to that JSON file. Each question needs ``db_id``, ``question``
and the gold SQL under ``SQL`` (BIRD) or ``query`` (Spider); BIRD's ``evidence`` is shown as a
hint, and ``question_id`` names the task. The database of ``db_id`` is
``DATABASES/db_id/db_id.sqlite`` (or ``.db``), opened read-only.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from rolloutgym_protocol import EnvSpec
from rolloutgym_protocol.errors import ConfigError

__all__ = ["BENCHMARKS_VARIABLE", "benchmark_tasks", "load_task_file", "task_file_specs", "make_task_file_env"]

BENCHMARKS_VARIABLE = "ROLLOUTGYM_SQL_BENCHMARKS"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _read_questions(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the questions file {str(path)!r}: {exc.strerror}. Check the path.") from None
    try:
        if path.suffix == ".jsonl":
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            items = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"the questions file {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ConfigError(f"the questions file {str(path)!r} must hold a list of objects (BIRD/Spider format)")
    return items


def _database_path(databases: Path, db_id: str) -> Path:
    for candidate in (
        databases / db_id / f"{db_id}.sqlite",
        databases / db_id / f"{db_id}.db",
        databases / f"{db_id}.sqlite",
        databases / f"{db_id}.db",
    ):
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"no SQLite database for db_id {db_id!r} under {str(databases)!r}; "
        f"expected {str(databases / db_id / (db_id + '.sqlite'))!r}"
    )


def load_task_file(
    questions: str | os.PathLike[str],
    databases: str | os.PathLike[str],
    *,
    split: str = "dev",
    limit: int | None = None,
) -> list[Any]:
    """Read a BIRD/Spider questions file into :class:`~rolloutgym_sql.SqlTask` s.

    Args:
        questions: the questions JSON (a list) or JSONL file.
        databases: the folder holding ``db_id/db_id.sqlite`` for every ``db_id``.
        split: the split of every task (these files are usually one split each).
        limit: read only the first N questions.
    """
    from ._sources import SqliteFileSource
    from ._tasks import SqlTask

    questions_path, databases_path = Path(questions), Path(databases)
    items = _read_questions(questions_path)[:limit]
    sources: dict[str, SqliteFileSource] = {}
    tasks = []
    for index, item in enumerate(items):
        db_id, question = item.get("db_id"), item.get("question")
        gold = item.get("SQL", item.get("query"))
        if not isinstance(db_id, str) or not isinstance(question, str) or not isinstance(gold, str):
            raise ConfigError(
                f"{str(questions_path)!r} item {index}: needs string fields 'db_id', 'question' and 'SQL' (BIRD) "
                "or 'query' (Spider)"
            )
        if db_id not in sources:
            sources[db_id] = SqliteFileSource(str(_database_path(databases_path, db_id)))
        evidence = item.get("evidence")
        instruction = question.strip() + (
            f"\nHint: {evidence.strip()}" if isinstance(evidence, str) and evidence.strip() else ""
        )
        identifier = item.get("question_id", index)
        tasks.append(
            SqlTask(
                f"{db_id}-{identifier}",
                instruction,
                split,
                gold_sql=(gold,),
                difficulty=str(item.get("difficulty", "")),
                database=sources[db_id],
            )
        )
    return tasks


def _benchmarks() -> dict[str, dict[str, Any]]:
    value = os.environ.get(BENCHMARKS_VARIABLE)
    if not value:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for file_name in value.split(os.pathsep):
        if not file_name:
            continue
        path = Path(file_name).expanduser()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{BENCHMARKS_VARIABLE}: cannot read {str(path)!r}: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(
                f"{BENCHMARKS_VARIABLE}: {str(path)!r} must map benchmark names to {{'questions', 'databases'}}"
            )
        for name, entry in data.items():
            if (
                not _NAME.match(str(name))
                or not isinstance(entry, dict)
                or not {"questions", "databases"} <= set(entry)
            ):
                raise ConfigError(
                    f"{BENCHMARKS_VARIABLE}: entry {name!r} in {str(path)!r} needs a lowercase name and the keys "
                    "'questions' and 'databases'"
                )
            base = path.parent
            found[str(name)] = {
                **entry,
                "questions": str((base / str(entry["questions"])).expanduser()),
                "databases": str((base / str(entry["databases"])).expanduser()),
            }
    return found


def task_file_specs() -> list[EnvSpec]:
    """EnvSpecs for the benchmarks listed in ``ROLLOUTGYM_SQL_BENCHMARKS`` (reads only that JSON file)."""
    specs = []
    for name, entry in _benchmarks().items():
        attribute = name.replace("-", "_")
        specs.append(
            EnvSpec(
                id=f"sql/{name}-v{int(entry.get('version', 0))}",
                entry_point="rolloutgym_sql.task_files:make_task_file_env",
                tasks=f"rolloutgym_sql.task_files:benchmark_tasks.{attribute}",
                description=entry.get("description")
                or f"Text-to-SQL task file: {entry['questions']} on databases in {entry['databases']}.",
                tags=("sql", "multi-turn", "tools", "text-to-sql", "task-file"),
                splits=(str(entry.get("split", "dev")),),
                max_steps=20,
                replayable=True,
            )
        )
    return specs


_TASK_CACHE: dict[tuple[Any, ...], list[Any]] = {}


def _cached_tasks(questions: str, databases: str, split: str) -> list[Any]:
    """The registry asks for the task list at every ``make()``: read each file once per change."""
    try:
        status = os.stat(questions)
        stamp: tuple[Any, ...] = (status.st_size, status.st_mtime_ns)
    except OSError:
        stamp = ()
    key = (questions, databases, split, stamp)
    if key not in _TASK_CACHE:
        _TASK_CACHE[key] = load_task_file(questions, databases, split=split)
    return _TASK_CACHE[key]


class _BenchmarkTasks:
    """``benchmark_tasks.NAME`` is the task loader of the registered benchmark NAME."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        for name, entry in _benchmarks().items():
            if name.replace("-", "_") == attribute:
                return lambda: _cached_tasks(entry["questions"], entry["databases"], str(entry.get("split", "dev")))
        raise AttributeError(f"no benchmark {attribute!r} in {BENCHMARKS_VARIABLE}")


benchmark_tasks = _BenchmarkTasks()


def make_task_file_env(task: Any, *, backend: str = "sqlite", statement_seconds: float | None = None) -> Any:
    """A :class:`~rolloutgym_sql.SqlEnv` for one task of a registered task file."""
    from ._results import Limits
    from .envs import SqlEnv

    limits = Limits() if statement_seconds is None else Limits(statement_seconds=float(statement_seconds))
    return SqlEnv(task, backend=backend, limits=limits, name=task.id.rsplit("-", 1)[0])
