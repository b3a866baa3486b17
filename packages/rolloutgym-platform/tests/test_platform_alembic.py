"""The migrations with the stock ``alembic`` CLI (a deploy that migrates before it starts the platform), and no
drift between the models and the migrations (``alembic check``), on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from rolloutgym_platform import db
from rolloutgym_platform.migrations import ALEMBIC_INI

# The stock `alembic` script of this environment (or its main, where the script is not next to the interpreter).
SCRIPT = Path(sys.executable).with_name("alembic")
ALEMBIC = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-c", "from alembic.config import main; main()"]


def alembic(*arguments: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``alembic -c ALEMBIC_INI ARGUMENTS`` (the stock CLI, run by this interpreter), from ``cwd``."""
    environ = {k: v for k, v in os.environ.items() if k != "ROLLOUTGYM_DATABASE_URL"} | (env or {})
    command = [*ALEMBIC, "-c", str(ALEMBIC_INI), *arguments]
    return subprocess.run(command, capture_output=True, text=True, env=environ, cwd=cwd, timeout=300)


def test_the_stock_cli_migrates_a_data_folder_the_platform_then_uses(tmp_path: Path) -> None:
    data = tmp_path / "data"
    upgrade = alembic("-x", f"data={data}", "upgrade", "head", cwd=tmp_path)
    assert upgrade.returncode == 0, upgrade.stderr
    with sqlite3.connect(data / "platform.db") as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        (revision,) = connection.execute("SELECT version_num FROM alembic_version").fetchone()
    assert {"api_keys", "env_versions", "runs", "jobs"} <= tables and revision == db.head_revision()
    current = alembic("-x", f"data={data}", "current", cwd=tmp_path)
    assert current.returncode == 0 and f"{db.head_revision()} (head)" in current.stdout
    sessions = db.open_database(data)  # the platform's own start finds nothing left to do, and works on it
    assert db.create_key(sessions, name="deploy", scopes=["run"]).startswith("rk_")
    sessions.kw["bind"].dispose()


def test_alembic_check_finds_no_drift_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'check.db'}"
    assert alembic("upgrade", "head", env={"ROLLOUTGYM_DATABASE_URL": url}).returncode == 0
    check = alembic("check", env={"ROLLOUTGYM_DATABASE_URL": url})
    assert check.returncode == 0, check.stdout + check.stderr
    assert "No new upgrade operations detected" in check.stdout + check.stderr


def test_alembic_check_finds_no_drift_on_postgresql(postgres) -> None:
    url = postgres.new_database()
    assert alembic("-x", f"database={url}", "upgrade", "head").returncode == 0
    check = alembic("-x", f"database={url}", "check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_without_a_database_the_cli_says_the_three_ways(tmp_path: Path) -> None:
    answer = alembic("upgrade", "head", cwd=tmp_path)
    said = answer.stdout + answer.stderr  # alembic prints "FAILED: ..." (on stdout in 1.x)
    assert answer.returncode != 0 and "Traceback" not in said and said.startswith("FAILED: which database?")
    assert "-x database=URL" in said and "ROLLOUTGYM_DATABASE_URL" in said
    assert "-x data=FOLDER" in said and list(tmp_path.iterdir()) == []


def _drift(url: str) -> list[tuple[str, str]]:
    """``(table, column)`` of every difference autogenerate finds between the models and the database at ``url``."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from rolloutgym_platform.models import Base
    from sqlalchemy import create_engine

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            found = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    finally:
        engine.dispose()
    return sorted((change[0][2], change[0][3]) for change in found if isinstance(change, list))


def test_the_nullable_drift_is_what_0002_fixes(tmp_path: Path) -> None:
    """At 0001 the models differ from the schema in exactly the three JSON columns; 0002 makes them NOT NULL, after
    filling a NULL that an old row has with the empty value."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    env = {"ROLLOUTGYM_DATABASE_URL": url}
    assert alembic("upgrade", "0001", env=env).returncode == 0
    assert _drift(url) == [("env_versions", "files"), ("jobs", "options"), ("runs", "options")]
    with sqlite3.connect(tmp_path / "old.db") as connection:
        connection.execute(
            "INSERT INTO jobs (id, org, source_run_id, method, base_model, state, attempts, created_at) "
            "VALUES ('job_1', 'acme', 'run_1', 'sft', 'hf:tiny', 'queued', 0, '2026-01-01')"
        )
    assert alembic("upgrade", "head", env=env).returncode == 0
    assert _drift(url) == []
    with sqlite3.connect(tmp_path / "old.db") as connection:
        assert connection.execute("SELECT options FROM jobs").fetchone() == ("{}",)
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute(
                "INSERT INTO runs (id, org, env_slug, env_version_id, policy, n, done, passes, trajectories, errors, "
                "state, attempts, created_at) VALUES ('r', 'o', 's', 1, 'p', 1, 0, 0, 0, 0, 'queued', 0, '2026-01-01')"
            )


def test_platform_migrate_brings_a_data_folder_to_head_and_stops(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "rolloutgym", "platform", "migrate", "--data", str(tmp_path / "data")]
    answer = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert answer.returncode == 0, answer.stderr
    assert f"newest migration ({db.head_revision()})" in answer.stdout
    with sqlite3.connect(tmp_path / "data" / "platform.db") as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchone() == (db.head_revision(),)
