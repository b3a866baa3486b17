"""The conformance kit on every shipped SQL environment, with both backends."""

from __future__ import annotations

import pytest
from rolloutgym_sql.shop import NOTHING_TO_DO_TASKS
from rolloutgym_testing import EnvConformanceTests


class TestShopSqlite(EnvConformanceTests):
    env_id = "sql/shop-v0"


class TestShopOpsSqlite(EnvConformanceTests):
    env_id = "sql/shop-ops-v0"
    null_exempt_tasks = NOTHING_TO_DO_TASKS


@pytest.mark.usefixtures("needs_duckdb")
class TestShopDuckDB(EnvConformanceTests):
    env_id = "sql/shop-v0"
    env_kwargs = {"backend": "duckdb"}


@pytest.mark.usefixtures("needs_duckdb")
class TestShopOpsDuckDB(EnvConformanceTests):
    env_id = "sql/shop-ops-v0"
    env_kwargs = {"backend": "duckdb"}
    null_exempt_tasks = NOTHING_TO_DO_TASKS
