"""rolloutgym-sql: execution-graded SQL environments on isolated SQLite or DuckDB copies.

* ``sql/shop-v0`` — text-to-SQL questions on a generated shop database;
* ``sql/shop-ops-v0`` — data-changing tasks graded by a database diff;
* the ``sql`` template for declarative env files (schema + seed, tasks with gold SQL);
* :func:`load_task_file` for your BIRD/Spider copies (task files).

Importing this package imports neither duckdb nor pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from ._compare import MatchOptions, ResultComparison, compare_results, orders_result
    from ._diff import DatabaseDiff, diff_databases
    from ._results import Limits, QueryResult, StatementError
    from ._schema import TableContents, TableInfo
    from ._sources import DatabaseSource, GeneratedSource, SqliteFileSource, SqlScriptSource
    from ._tasks import SqlTask
    from .envs import SQL_TOOLS, SqlEnv
    from .grading import expected_result, expected_state, grade_changes, grade_query, parse_answer_value
    from .shop import make_shop_env, make_shop_ops_env, shop_ops_tasks, shop_tasks
    from .task_files import load_task_file
    from .template import compile_sql

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_compare": ["MatchOptions", "ResultComparison", "compare_results", "orders_result"],
        "_diff": ["DatabaseDiff", "diff_databases"],
        "_results": ["Limits", "QueryResult", "StatementError"],
        "_schema": ["TableContents", "TableInfo"],
        "_sources": ["DatabaseSource", "GeneratedSource", "SqlScriptSource", "SqliteFileSource"],
        "_tasks": ["SqlTask"],
        "envs": ["SQL_TOOLS", "SqlEnv"],
        "grading": ["expected_result", "expected_state", "grade_changes", "grade_query", "parse_answer_value"],
        "shop": ["make_shop_env", "make_shop_ops_env", "shop_ops_tasks", "shop_tasks"],
        "task_files": ["load_task_file"],
        "template": ["compile_sql"],
    },
)
