"""Hook implementations of ``rolloutgym-sql`` (imports nothing heavy: no duckdb, no sqlite work)."""

from __future__ import annotations

from rolloutgym_protocol import EnvSpec, TemplateSpec, hookimpl

_SPLITS = ("train", "dev", "test")


@hookimpl
def rolloutgym_envs() -> list[EnvSpec]:
    from .task_files import task_file_specs

    return [
        EnvSpec(
            id="sql/shop-v0",
            entry_point="rolloutgym_sql.shop:make_shop_env",
            tasks="rolloutgym_sql.shop:shop_tasks",
            description=(
                "Answer questions about an online shop's database (customers, products, orders, order items, "
                "payments, shipments, returns; about 10,000 generated rows) with SQL: filters, joins, aggregations, "
                "window functions, date arithmetic and NULL traps. Tools describe_schema, run_sql, submit_answer; "
                "graded by execution match against the gold query (multiset, order-aware). "
                "--backend sqlite (default) or duckdb."
            ),
            tags=("sql", "multi-turn", "tools", "text-to-sql"),
            splits=_SPLITS,
            max_steps=20,
            replayable=True,
            forkable=True,
        ),
        EnvSpec(
            id="sql/shop-ops-v0",
            entry_point="rolloutgym_sql.shop:make_shop_ops_env",
            tasks="rolloutgym_sql.shop:shop_ops_tasks",
            description=(
                "Change data in an online shop's database with SQL (cancel orders, update prices, insert customers, "
                "settle returns, ...). Graded by a diff of the final database against the end state the gold "
                "statements produce; feedback names missing, extra and changed rows. "
                "--backend sqlite (default) or duckdb."
            ),
            tags=("sql", "multi-turn", "tools", "data-changes"),
            splits=_SPLITS,
            max_steps=20,
            replayable=True,
            forkable=True,
        ),
        *task_file_specs(),
    ]


@hookimpl
def rolloutgym_templates() -> list[TemplateSpec]:
    return [
        TemplateSpec(
            name="sql",
            entry_point="rolloutgym_sql.template:compile_sql",
            description=(
                "schema (DDL) + optional seed (INSERT SQL) or database file; "
                "tools describe_schema, run_sql, submit_answer."
            ),
        )
    ]
