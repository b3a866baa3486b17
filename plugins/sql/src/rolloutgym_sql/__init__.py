"""rolloutgym-sql: execution-graded SQL environments on isolated SQLite or DuckDB copies.

* ``sql/shop-v0`` — text-to-SQL questions on a generated shop database;
* ``sql/shop-ops-v0`` — data-changing tasks graded by a database diff;
* the ``sql`` template for declarative env files (schema + seed, tasks with gold SQL);
* :func:`load_task_file` for local BIRD/Spider copies.

Importing this package imports neither duckdb nor pyarrow.
"""

from ._compare import MatchOptions, ResultComparison, compare_results, orders_result
from ._diff import DatabaseDiff, diff_databases
from ._results import Limits, QueryResult, StatementError
from ._schema import TableContents, TableInfo
from ._sources import DatabaseSource, GeneratedSource, SqliteFileSource, SqlScriptSource
from ._tasks import SqlTask
from .envs import SQL_TOOLS, SqlEnv
from .local import load_task_file
from .shop import make_shop_env, make_shop_ops_env, shop_ops_tasks, shop_tasks
from .template import compile_sql

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
