"""BIRD/Spider-style task files: loading by path and registering through an env variable."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from rolloutgym.registry import Registry
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_sql import SqlEnv, load_task_file
from rolloutgym_sql.task_files import BENCHMARKS_VARIABLE
from rolloutgym_testing import run_episode


def _database(path: Path, script: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(script)
    connection.commit()
    connection.close()


@pytest.fixture
def benchmark_folder(tmp_path: Path) -> Path:
    """A two-database benchmark_folder folder: dev.json (BIRD and Spider items mixed) + databases/."""
    databases = tmp_path / "databases"
    _database(
        databases / "concert" / "concert.sqlite",
        "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, age INTEGER, country TEXT);"
        "INSERT INTO singer VALUES (1, 'Joe', 52, 'France'), (2, 'Ann', 29, 'Netherlands'), (3, 'Li', 41, 'France');",
    )
    _database(
        databases / "pets" / "pets.sqlite",
        "CREATE TABLE pets (pet_id INTEGER PRIMARY KEY, kind TEXT, weight REAL);"
        "INSERT INTO pets VALUES (1, 'dog', 12.5), (2, 'cat', 4.0), (3, 'dog', 20.0);",
    )
    questions = [
        {
            "question_id": 0,
            "db_id": "concert",
            "question": "How many singers are from France?",
            "evidence": "France is a country name",
            "SQL": "SELECT COUNT(*) FROM singer WHERE country = 'France'",
            "difficulty": "simple",
        },
        {
            "db_id": "concert",
            "question": "List singer names from the oldest to the youngest.",
            "query": "SELECT name FROM singer ORDER BY age DESC",
        },
        {
            "db_id": "pets",
            "question": "What is the average weight of dogs?",
            "query": "SELECT AVG(weight) FROM pets WHERE kind = 'dog'",
        },
    ]
    (tmp_path / "dev.json").write_text(json.dumps(questions))
    return tmp_path


def test_load_task_file_reads_bird_and_spider_items(benchmark_folder: Path) -> None:
    tasks = load_task_file(benchmark_folder / "dev.json", benchmark_folder / "databases")
    assert [task.id for task in tasks] == ["concert-0", "concert-1", "pets-2"]
    assert tasks[0].instruction == "How many singers are from France?\nHint: France is a country name"
    assert tasks[0].difficulty == "simple" and all(task.split == "dev" for task in tasks)
    before = hashlib.sha256((benchmark_folder / "databases" / "concert" / "concert.sqlite").read_bytes()).hexdigest()
    for task in tasks:
        environment = SqlEnv(task)
        environment.reset(seed=0)
        environment.step(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "1", "name": "run_sql", "arguments": {"sql": "DROP TABLE IF EXISTS singer"}}],
            }
        )
        _, reward, terminated, _, info = environment.step(environment.oracle_action())
        environment.close()
        assert terminated and reward == 1.0, info["score"]["feedback"]
    after = hashlib.sha256((benchmark_folder / "databases" / "concert" / "concert.sqlite").read_bytes()).hexdigest()
    assert before == after


def test_benchmarks_registered_by_path_run_through_the_registry(
    benchmark_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = benchmark_folder / "benchmarks.json"
    config.write_text(json.dumps({"mini-dev": {"questions": "dev.json", "databases": "databases", "split": "dev"}}))
    monkeypatch.setenv(BENCHMARKS_VARIABLE, str(config))
    registry = Registry()
    assert "sql/mini-dev-v0" in [spec.id for spec in registry.envs("sql")]
    assert len(registry.tasks("sql/mini-dev-v0")) == 3
    assert run_episode("sql/mini-dev-v0", "oracle", task="pets-2", registry=registry).score.value == 1.0
    assert run_episode("sql/mini-dev-v0", "null", task="pets-2", registry=registry).score.value == 0.0


def test_missing_and_malformed_files_are_explained(benchmark_folder: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no SQLite database for db_id 'concert'.*concert\.sqlite"):
        load_task_file(benchmark_folder / "dev.json", tmp_path / "nowhere")
    (tmp_path / "broken.json").write_text("[{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_task_file(tmp_path / "broken.json", benchmark_folder / "databases")
    (tmp_path / "odd.json").write_text(json.dumps([{"db_id": "concert", "question": "?"}]))
    with pytest.raises(ConfigError, match="'SQL' \\(BIRD\\) or 'query' \\(Spider\\)"):
        load_task_file(tmp_path / "odd.json", benchmark_folder / "databases")
