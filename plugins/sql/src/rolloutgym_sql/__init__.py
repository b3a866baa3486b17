"""rolloutgym-sql: execution-graded SQL environments on isolated SQLite or DuckDB copies.

* ``sql/shop-v0`` — text-to-SQL questions on a generated shop database;
* ``sql/shop-ops-v0`` — data-changing tasks graded by a database diff;
* the ``sql`` template for declarative env files (schema + seed, tasks with gold SQL);
* :func:`load_task_file` for your BIRD/Spider copies (task files).

Importing this package imports neither duckdb nor pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._compare import MatchOptions, ResultComparison, compare_results, orders_result
    from ._diff import DatabaseDiff, diff_databases
    from ._results import Limits, QueryResult, StatementError
    from ._schema import TableContents, TableInfo
    from ._sources import DatabaseSource, GeneratedSource, SqliteFileSource, SqlScriptSource
    from ._tasks import SqlTask
    from .envs import SQL_TOOLS, SqlEnv
    from .shop import make_shop_env, make_shop_ops_env, shop_ops_tasks, shop_tasks
    from .task_files import load_task_file
    from .template import compile_sql

# Lazy re-exports (PEP 562): ``rolloutgym list`` imports ``rolloutgym_sql.plugin``, which
# imports this package first, so nothing here may be imported eagerly.
_EXPORTS = {
    "SQL_TOOLS": ".envs",
    "DatabaseDiff": "._diff",
    "DatabaseSource": "._sources",
    "GeneratedSource": "._sources",
    "Limits": "._results",
    "MatchOptions": "._compare",
    "QueryResult": "._results",
    "ResultComparison": "._compare",
    "SqlEnv": ".envs",
    "SqlScriptSource": "._sources",
    "SqlTask": "._tasks",
    "SqliteFileSource": "._sources",
    "StatementError": "._results",
    "TableContents": "._schema",
    "TableInfo": "._schema",
    "compare_results": "._compare",
    "compile_sql": ".template",
    "diff_databases": "._diff",
    "load_task_file": ".task_files",
    "make_shop_env": ".shop",
    "make_shop_ops_env": ".shop",
    "orders_result": "._compare",
    "shop_ops_tasks": ".shop",
    "shop_tasks": ".shop",
}

__all__ = [
    "SQL_TOOLS",
    "DatabaseDiff",
    "DatabaseSource",
    "GeneratedSource",
    "Limits",
    "MatchOptions",
    "QueryResult",
    "ResultComparison",
    "SqlEnv",
    "SqlScriptSource",
    "SqlTask",
    "SqliteFileSource",
    "StatementError",
    "TableContents",
    "TableInfo",
    "compare_results",
    "compile_sql",
    "diff_databases",
    "load_task_file",
    "make_shop_env",
    "make_shop_ops_env",
    "orders_result",
    "shop_ops_tasks",
    "shop_tasks",
]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'rolloutgym_sql' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
