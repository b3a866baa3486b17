"""The shipped shop environments: ``sql/shop-v0`` (questions) and ``sql/shop-ops-v0`` (data changes).

Both run on the database of :func:`build_shop`, generated deterministically in memory (no
file is shipped or written). Factories take ``backend`` (``"sqlite"`` or ``"duckdb"``) and
``statement_seconds`` (the per-statement time limit).
"""

from __future__ import annotations

from typing import Any

from ._data_files import shop_ops, shop_questions
from ._results import Limits
from ._shop_data import SHOP_DESCRIPTION, build_shop
from ._sources import GeneratedSource
from ._tasks import SqlTask
from .envs import SqlEnv

__all__ = [
    "NOTHING_TO_DO_TASKS",
    "make_shop_env",
    "make_shop_ops_env",
    "shop_ops_tasks",
    "shop_source",
    "shop_tasks",
]

_SOURCE = GeneratedSource("shop-v0", build_shop)


def shop_source() -> GeneratedSource:
    """The shop database (generated once per process, then copied per episode)."""
    return _SOURCE


NOTHING_TO_DO_TASKS: tuple[str, ...]
"""The ids of the ops tasks whose right answer is to change nothing (the null policy passes them)."""


def __getattr__(name: str) -> Any:
    # NOTHING_TO_DO_TASKS is read from the data on first use, so importing this module reads no file.
    if name == "NOTHING_TO_DO_TASKS":
        return tuple(record.id for record in shop_ops() if record.nothing_to_do)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def shop_tasks() -> list[SqlTask]:
    """The questions of ``sql/shop-v0`` (``data/shop_questions.jsonl``; train/dev/test splits in the data)."""
    return [
        SqlTask(
            record.id,
            record.instruction,
            record.split,
            gold_sql=(record.sql,),
            gold_sql_by_backend={"duckdb": (record.duckdb_sql,)} if record.duckdb_sql else {},
            skills=record.skills,
            difficulty=record.difficulty,
        )
        for record in shop_questions()
    ]


def shop_ops_tasks() -> list[SqlTask]:
    """The data-changing tasks of ``sql/shop-ops-v0`` (``data/shop_ops.jsonl``)."""
    return [
        SqlTask(
            record.id,
            record.instruction,
            record.split,
            gold_sql=record.statements,
            changes_data=True,
            skills=record.skills,
            difficulty=record.difficulty,
        )
        for record in shop_ops()
    ]


def _limits(statement_seconds: Any) -> Limits:
    return Limits() if statement_seconds is None else Limits(statement_seconds=float(statement_seconds))


def make_shop_env(
    task: SqlTask | None = None, *, backend: str = "sqlite", statement_seconds: float | None = None
) -> SqlEnv:
    """A ``sql/shop-v0`` environment for one question (the first one by default)."""
    return SqlEnv(
        task or shop_tasks()[0],
        source=_SOURCE,
        backend=backend,
        limits=_limits(statement_seconds),
        name="sql/shop-v0",
        description=SHOP_DESCRIPTION,
    )


def make_shop_ops_env(
    task: SqlTask | None = None, *, backend: str = "sqlite", statement_seconds: float | None = None
) -> SqlEnv:
    """A ``sql/shop-ops-v0`` environment for one data-changing task (the first one by default)."""
    return SqlEnv(
        task or shop_ops_tasks()[0],
        source=_SOURCE,
        backend=backend,
        limits=_limits(statement_seconds),
        name="sql/shop-ops-v0",
        description=SHOP_DESCRIPTION,
    )
