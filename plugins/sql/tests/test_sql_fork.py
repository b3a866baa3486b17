"""Forking SQL episodes: each fork owns a copy of the episode's database (SQLite image, DuckDB replay)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym_protocol import EnvState
from rolloutgym_protocol.errors import StateError


def run_sql(sql: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "name": "run_sql", "arguments": {"sql": sql}}],
    }


def status(env: Any) -> str:
    observations, *_ = env.step(run_sql("SELECT status FROM orders WHERE order_id = 202"))
    return observations[0]["content"]


@pytest.mark.parametrize(("backend", "replay_at_most"), [("sqlite", 16), ("sqlite", 0), ("duckdb", 16)])
def test_forks_own_their_database(backend: str, replay_at_most: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from rolloutgym_sql import _forking

    monkeypatch.setattr(_forking, "REPLAY_AT_MOST", replay_at_most)  # 0: the fork copies the SQLite file
    env = rg.make("sql/shop-ops-v0", task=0, backend=backend)
    children: list[Any] = []
    try:
        env.reset(seed=0)
        env.step(run_sql("UPDATE orders SET status = 'cancelled' WHERE order_id = 202"))
        children = env.fork(2)
        assert ("database" in env.snapshot().blobs) == (replay_at_most == 0)
        children[0].step(run_sql("UPDATE orders SET status = 'lost' WHERE order_id = 202"))
        assert "lost" in status(children[0])
        assert "cancelled" in status(env) and "cancelled" in status(children[1])
        submit = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "s", "name": "submit_answer", "arguments": {}}],
        }
        assert children[1].step(submit)[1] == env.step(submit)[1] == 1.0
        assert children[0].step(submit)[1] == 0.0
    finally:
        for each in [env, *children]:
            each.close()


def test_a_stored_sql_state_restores_and_a_corrupt_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from rolloutgym_sql import _forking

    env = rg.make("sql/shop-ops-v0", task=0)
    fresh = rg.make("sql/shop-ops-v0", task=0)
    other_backend = rg.make("sql/shop-ops-v0", task=0, backend="duckdb")
    try:
        env.reset(seed=0)
        env.step(run_sql("UPDATE orders SET status = 'cancelled' WHERE order_id = 202"))
        text = env.snapshot().to_json()
        fresh.restore(EnvState.from_json(text))
        assert "cancelled" in status(fresh)
        data = json.loads(text)
        data["blobs"]["database"] = "bm90IGEgZGF0YWJhc2U="  # "not a database"
        with pytest.raises(StateError, match="could not restore this state.*could not be opened"):
            fresh.restore(EnvState.from_dict(data))
        monkeypatch.setattr(_forking, "REPLAY_AT_MOST", 0)
        with pytest.raises(StateError, match="SQLite database copy; this env runs on duckdb"):
            other_backend.restore(env.snapshot())
    finally:
        env.close()
        fresh.close()
        other_backend.close()
    reader = rg.make("sql/shop-v0", task=0)
    try:
        reader.reset(seed=0)
        data = json.loads(reader.snapshot().to_json())
        data["data"]["statements"] = ["DELETE FROM orders"]
        with pytest.raises(StateError, match="read-only task's state carries database changes"):
            reader.restore(EnvState.from_dict(data))
    finally:
        reader.close()
