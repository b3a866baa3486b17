"""The ``sql`` template: SDK-style env files run locally, malformed ones fail with clear errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rolloutgym.declarative import Environment, Task, compile_environment
from rolloutgym.runner import run
from rolloutgym_protocol.errors import EnvFileError
from rolloutgym_sql import SqlEnv, compile_sql

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "library_env.py"
SCHEMA = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL);"
SEED = "INSERT INTO items VALUES (1, 'pen', 1.5), (2, 'book', 12.0), (3, 'lamp', NULL);"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"call_{name}", "name": name, "arguments": arguments}],
    }


@pytest.mark.parametrize("policy", ["oracle", "null"])
def test_the_example_env_file_runs_locally(policy: str, backend: str, tmp_path: Path) -> None:
    result = run(str(EXAMPLE), policy=policy, out=tmp_path / "run.jsonl", env_kwargs={"backend": backend})
    assert result.summary.num_tasks == 5 and result.summary.num_errors == 0
    assert result.summary.mean_reward == (1.0 if policy == "oracle" else 0.0)


def test_the_cli_runs_an_env_file(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "rolloutgym",
        "run",
        str(EXAMPLE),
        "--policy",
        "oracle",
        "--out",
        str(tmp_path / "run.jsonl"),
        "-q",
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert "pass rate 100.0%" in completed.stdout


def test_compiled_env_uses_the_sql_tools_and_grades_with_hidden_ground_truth() -> None:
    environment = Environment(
        slug="items",
        name="Items",
        template="sql",
        schema=SCHEMA,
        seed=SEED,
        tasks=[
            Task(
                instruction="Which items have no price?",
                hidden_ground_truth={"sql": "SELECT name FROM items WHERE price IS NULL"},
            ),
            Task(
                instruction="Delete the lamp.", hidden_ground_truth={"sql": ["DELETE FROM items WHERE name = 'lamp'"]}
            ),
        ],
    )
    factory = compile_environment(environment)
    question = factory(environment.tasks[0])
    assert isinstance(question, SqlEnv) and [tool["function"]["name"] for tool in question.tools] == [
        "describe_schema",
        "run_sql",
        "submit_answer",
    ]
    observation, _ = question.reset(seed=0)
    assert observation[1]["content"] == "Which items have no price?"
    schema, *_ = question.step(call("describe_schema"))
    assert "TABLE items (3 rows)" in schema[0]["content"]
    _, reward, terminated, _, info = question.step(
        call("submit_answer", sql="SELECT name FROM items WHERE price = NULL")
    )
    assert terminated and reward == 0.0 and "expected 1 rows, got 0" in info["score"]["feedback"]
    question.close()
    change = factory(environment.tasks[1])
    assert not change.read_only
    change.reset(seed=0)
    change.step(call("run_sql", sql="DELETE FROM items WHERE price IS NULL"))
    _, reward, _, _, info = change.step(call("submit_answer"))
    change.close()
    assert reward == 1.0, info["score"]["feedback"]


def test_task_input_is_appended_like_the_sdk() -> None:
    environment = Environment(
        slug="items",
        name="Items",
        template="sql",
        schema=SCHEMA,
        seed=SEED,
        tasks=[
            Task(
                instruction="What does this item cost?",
                hidden_ground_truth={"sql": "SELECT price FROM items WHERE id = 2"},
                input={"id": 2},
            )
        ],
    )
    environment_instance = compile_sql(environment)(environment.tasks[0])
    observation, _ = environment_instance.reset(seed=0)
    environment_instance.close()
    assert (
        observation[1]["content"].startswith("What does this item cost?\n\nInput:\n")
        and '"id": 2' in observation[1]["content"]
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"schema": "CREATE TABLE broken ("}, "schema SQL does not run on SQLite"),
        ({"seed": "INSERT INTO nowhere VALUES (1);"}, "seed SQL does not run on SQLite"),
        ({"tasks": [Task(instruction="No truth here")]}, "has no ground truth"),
        (
            {"tasks": [Task(instruction="Bad truth", hidden_ground_truth={"sql": 42})]},
            "must be a string or a list of strings",
        ),
        (
            {
                "tasks": [
                    Task(instruction="Bad option", hidden_ground_truth={"sql": "SELECT 1", "column_order": "sideways"})
                ]
            },
            "column_order",
        ),
    ],
)
def test_malformed_env_files_fail_with_a_clear_message(changes: dict[str, Any], message: str) -> None:
    fields: dict[str, Any] = {
        "slug": "bad",
        "name": "Bad",
        "template": "sql",
        "schema": SCHEMA,
        "seed": SEED,
        "tasks": [Task(instruction="q", hidden_ground_truth={"sql": "SELECT 1"})],
    }
    fields.update(changes)
    with pytest.raises(EnvFileError, match=message):
        compile_sql(Environment(**fields))


def test_a_database_file_can_replace_schema_and_seed(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "items.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript(SCHEMA + SEED)
    connection.commit()
    connection.close()
    duck_typed = {
        "slug": "file-env",
        "template": "sql",
        "config": {"database": str(path)},
        "tasks": [{"instruction": "How many items?", "hidden_ground_truth": {"sql": "SELECT COUNT(*) FROM items"}}],
    }
    environment = compile_sql(duck_typed)(0)
    environment.reset(seed=0)
    _, reward, _, _, _ = environment.step(environment.oracle_action())
    environment.close()
    assert reward == 1.0


def test_an_end_state_written_by_hand_is_graded_on_the_named_tables_and_columns() -> None:
    environment = Environment(
        slug="items",
        name="Items",
        template="sql",
        schema=SCHEMA,
        seed=SEED,
        tasks=[
            Task(
                instruction="Give the lamp a price of 30.",
                hidden_ground_truth={
                    "end_state": {"items": [{"id": 1, "price": 1.5}, {"id": 2, "price": 12.0}, {"id": 3, "price": 30}]}
                },
            )
        ],
    )
    factory = compile_sql(environment)
    for statement, expected in [
        ("UPDATE items SET price = 30 WHERE name = 'lamp'", 1.0),
        ("UPDATE items SET price = 3 WHERE id = 3", 0.0),
    ]:
        instance = factory(environment.tasks[0])
        instance.reset(seed=0)
        instance.step(call("run_sql", sql=statement))
        _, reward, _, _, info = instance.step(call("submit_answer"))
        instance.close()
        assert reward == expected, info["score"]["feedback"]
        if not expected:
            assert "items id=3: price is 3.0, expected 30" in info["score"]["feedback"]


def test_an_env_file_can_point_at_an_existing_database(tmp_path: Path) -> None:
    import hashlib
    import sqlite3

    database = tmp_path / "items.sqlite"
    connection = sqlite3.connect(database)
    connection.executescript(SCHEMA + SEED)
    connection.commit()
    connection.close()
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    env_file = tmp_path / "items_env.py"
    env_file.write_text(
        "from rolloutgym.declarative import Environment, Task\n"
        "env = Environment(slug='items', name='Items', template='sql',\n"
        f"    config={{'database': {str(database)!r}}},\n"
        "    tasks=[Task(instruction='How many items have a price?',\n"
        "                hidden_ground_truth={'gold_sql': 'SELECT COUNT(*) FROM items WHERE price IS NOT NULL'})])\n"
    )
    oracle = run(str(env_file), policy="oracle", out=tmp_path / "oracle.jsonl")
    null = run(str(env_file), policy="null", out=tmp_path / "null.jsonl")
    assert (oracle.summary.mean_reward, null.summary.mean_reward) == (1.0, 0.0)
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before  # the source is never written


SDK_SHAPED = """
from rolloutgym.declarative import Environment, Task

env = Environment(
    slug="sdk-items",
    name="Items",
    template="sql",
    config={{"schema": {schema!r}, "seed": {seed!r}}},
    tasks=[
        Task(instruction="How many items cost more than 1?", hidden_ground_truth={{"answer": 2}}),
        Task(instruction="Which item is the most expensive? Give its name.", hidden_ground_truth={{"answer": "book"}}),
    ],
)
"""


@pytest.mark.parametrize("policy", ["oracle", "null"])
def test_an_env_file_in_the_sdk_templates_table_shape_runs(policy: str, tmp_path: Path) -> None:
    """The SDK's README table: the sql config holds schema + seed; the ground truth is {"answer": ...}."""
    path = tmp_path / "sdk_items.py"
    path.write_text(SDK_SHAPED.format(schema=SCHEMA, seed=SEED))
    result = run(str(path), policy=policy, out=tmp_path / "run.jsonl")
    assert result.summary.num_tasks == 2 and result.summary.num_errors == 0
    assert result.summary.mean_reward == (1.0 if policy == "oracle" else 0.0)


def test_an_sdk_answer_is_graded_as_the_expected_value() -> None:
    environment = Environment(
        slug="items",
        name="Items",
        template="sql",
        config={"schema": SCHEMA, "seed": SEED},
        tasks=[Task(instruction="How many items?", hidden_ground_truth={"answer": 3})],
    )
    assert environment.schema == SCHEMA and environment.seed == SEED and environment.config is None
    for answer, reward in (("3", 1.0), ("4", 0.0)):
        sql_env = compile_sql(environment)(0)
        sql_env.reset(seed=0)
        _, got, terminated, _, _ = sql_env.step(call("submit_answer", answer=answer))
        sql_env.close()
        assert terminated and got == reward


def test_sql_config_keys_that_do_not_map_say_what_to_write() -> None:
    with pytest.raises(EnvFileError, match=r"config=\{'schema': \.\.\., 'seed': \.\.\.\}.*unknown config keys: 'ddl'"):
        Environment(
            slug="s",
            name="S",
            template="sql",
            config={"ddl": SCHEMA},
            tasks=[Task(instruction="q", hidden_ground_truth={"answer": 1})],
        )
    with pytest.raises(EnvFileError, match="give schema/seed once"):
        Environment(slug="s", name="S", template="sql", schema=SCHEMA, config={"schema": SCHEMA})
