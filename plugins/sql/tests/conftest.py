"""Fixtures of the rolloutgym-sql tests: the backend parameter and the DuckDB requirement."""

from __future__ import annotations

import os

import pytest


def _require_duckdb() -> None:
    try:
        import duckdb  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(
                f"the DuckDB backend tests need the 'test' extra ({exc.name} is missing): pip install -e "
                "'plugins/sql[test]'"
            )
        pytest.skip(f"{exc.name} is not installed (pip install 'rolloutgym-sql[duckdb]')")


@pytest.fixture
def needs_duckdb() -> None:
    """Skip without duckdb locally; under CI=true a missing duckdb fails."""
    _require_duckdb()


@pytest.fixture(params=["sqlite", "duckdb"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn."""
    if request.param == "duckdb":
        _require_duckdb()
    return str(request.param)
