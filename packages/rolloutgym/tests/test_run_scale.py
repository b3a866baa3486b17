"""A run's plan does not grow with -n: seeds, members and groups are made as they are consumed.

Issue 32: ``rolloutgym run toy/guess-v0 -n 1000000000 --limit 1`` grew to 16 GB before a single
episode (a list of every member, every seed and every group slot up front) and never heard
Ctrl-C (a worker whose members never wait never gave the event loop a turn). These tests run the
real runner, local executor and toy env; the Ctrl-C test is in tests/e2e/test_cli_interrupt.py.
"""

from __future__ import annotations

import asyncio
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym.rollouts import GroupCollector, planned_seeds
from rolloutgym.runner import MAX_ROLLOUTS_PER_TASK, RunConfig, arun
from rolloutgym_protocol.errors import ConfigError

EPISODES = 300


class _StopAfter:
    """The oracle, which cancels the run once it has been called for ``episodes`` episodes."""

    def __init__(self, episodes: int) -> None:
        self.oracle = rg.make_policy("oracle")
        self.episodes = episodes
        self.resets = 0
        self.task: asyncio.Task[Any] | None = None

    def for_env(self, env: Any) -> Any:
        self.resets += 1
        if self.resets > self.episodes and self.task is not None:
            self.task.cancel()
        bound = self.oracle.for_env(env) if hasattr(self.oracle, "for_env") else self.oracle
        return bound


def _peak_bytes(num_rollouts: int, tmp_path: Path, seed: int | None) -> tuple[int, int]:
    """Peak traced memory of a run of one task stopped after ``EPISODES`` episodes, and the episodes started."""
    policy = _StopAfter(EPISODES)
    config = RunConfig(
        env="toy/guess-v0", num_rollouts=num_rollouts, limit=1, seed=seed, out=tmp_path / f"run-{num_rollouts}.jsonl"
    )

    async def main() -> None:
        policy.task = asyncio.current_task()
        try:
            await arun(config, policy=policy)
        except asyncio.CancelledError:
            pass

    tracemalloc.start()
    try:
        asyncio.run(main())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, policy.resets


@pytest.mark.parametrize("seed", [None, 7])
def test_memory_of_a_stopped_run_does_not_grow_with_n(tmp_path: Path, seed: int | None) -> None:
    # The same work (about EPISODES episodes of one task), planned for EPISODES members or for a million.
    small, small_episodes = _peak_bytes(EPISODES + 20, tmp_path, seed)
    large, large_episodes = _peak_bytes(1_000_000, tmp_path, seed)
    assert small_episodes > EPISODES and large_episodes > EPISODES
    # Planning a million members up front costs > 50 MB (a tuple per member, a seed list, group slots).
    assert large < small * 1.5 + 4_000_000, (small, large)


def test_an_absurd_n_is_refused_with_the_limit_and_what_to_do() -> None:
    with pytest.raises(ConfigError) as caught:
        RunConfig(env="toy/guess-v0", num_rollouts=1_000_000_000).validate()
    message = str(caught.value)
    assert "-n 1000000000" in message and f"{MAX_ROLLOUTS_PER_TASK:,}" in message and "--seed" in message


def test_planned_seeds_are_the_member_seeds_in_constant_memory() -> None:
    assert list(planned_seeds(10, 4)) == rg.rollouts.member_seeds(10, 4)
    assert list(planned_seeds(None, 3)) == [None, None, None]
    unseeded = planned_seeds(None, 10**12)
    assert len(unseeded) == 10**12 and unseeded[10**12 - 1] is None
    with pytest.raises(IndexError):
        unseeded[10**12]


def test_a_group_holds_only_the_members_that_arrived() -> None:
    collector = GroupCollector()
    collector.open("g", None, "t", 10**9)  # no slot per member up front
    assert collector.add("g", 5, rg.rollouts.error_record(ValueError("x"), 5)) is None
    with pytest.raises(RuntimeError, match="reported twice"):
        collector.add("g", 5, rg.rollouts.error_record(ValueError("x"), 5))
