"""Seed 003: the final state's ``extra_env_info`` is the env's last metadata (what its last ``step`` returned), not
the input's; a sample whose env never stepped keeps its own; samples without the field get no column."""

from __future__ import annotations

import asyncio

import pytest
from rolloutgym.llm.rollouts import (
    run_async_multi_turn_rollout,
    run_multi_turn_rollout,
    run_sample_multi_turn_rollout,
)

from .test_llm_seed_api import Batch, BiggerEnv, samples


@pytest.mark.parametrize("rollout", [run_multi_turn_rollout, run_async_multi_turn_rollout])
def test_the_final_extra_env_info_is_the_envs_last(rollout) -> None:
    batch, _ = rollout(Batch(), samples([1, 4, 5]), None, {"bigger": BiggerEnv()}, 512)
    # the env's second step returned its turn-1 metadata (doubled targets): that is the final state
    assert batch["extra_env_info"] == [{"target": 2, "turn": 1}, {"target": 8, "turn": 1}, {"target": 10, "turn": 1}]
    assert [row["extra_env_info"] for row in batch.rows()] == batch["extra_env_info"]


def test_one_sample_and_a_turn_budget_of_one() -> None:
    state, _ = asyncio.run(
        run_sample_multi_turn_rollout(0, samples([7])[0], Batch(), None, {"bigger": BiggerEnv()}, 512)
    )
    assert state["extra_env_info"] == {"target": 14, "turn": 1}
    batch, _ = run_multi_turn_rollout(Batch(), samples([3]), None, {"bigger": BiggerEnv()}, 512, max_rollout_turns=1)
    assert batch["extra_env_info"] == [{"target": 6, "turn": 1}]  # one step taken: its metadata


def test_samples_without_the_field_get_no_column() -> None:
    plain = [{key: value for key, value in sample.items() if key != "extra_env_info"} for sample in samples([1])]

    class Defaulting(BiggerEnv):
        def step(self, logs, metadata):
            return super().step(logs, [info or {"target": 1, "turn": 0} for info in metadata])

    batch, _ = run_multi_turn_rollout(Batch(), plain, None, {"bigger": Defaulting()}, 512)
    assert "extra_env_info" not in batch.columns
