"""The shipped shop environments: ``sql/shop-v0`` (questions) and ``sql/shop-ops-v0`` (data changes).

Both run on the database of :func:`build_shop`, generated deterministically in memory (no
file is shipped or written). Factories take ``backend`` (``"sqlite"`` or ``"duckdb"``) and
``statement_seconds`` (the per-statement time limit).
"""

from __future__ import annotations

from typing import Any

from ._results import Limits
from ._shop_data import SHOP_DESCRIPTION, build_shop
from ._shop_ops import NOTHING_TO_DO_TASKS, SHOP_OPS
from ._shop_questions import SHOP_QUESTIONS
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


def shop_tasks() -> list[SqlTask]:
    """The questions of ``sql/shop-v0`` (train/dev/test splits in the data)."""
    tasks = []
    for identifier, split, difficulty, skills, instruction, sql, duckdb_sql in SHOP_QUESTIONS:
        tasks.append(
            SqlTask(
                identifier,
                instruction,
                split,
                gold_sql=(sql,),
                gold_sql_by_backend={"duckdb": (duckdb_sql,)} if duckdb_sql else {},
                skills=skills,
                difficulty=difficulty,
            )
        )
    return tasks


def shop_ops_tasks() -> list[SqlTask]:
    """The data-changing tasks of ``sql/shop-ops-v0``."""
    return [
        SqlTask(
            identifier, instruction, split, gold_sql=statements, changes_data=True, skills=skills, difficulty=difficulty
        )
        for identifier, split, difficulty, skills, instruction, statements in SHOP_OPS
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
