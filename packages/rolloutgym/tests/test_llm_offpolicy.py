"""Off-policy pieces over the async batch API: version tags per token, updates between turns,
and a bounded-staleness queue. The model is scripted (CharRenderer); the hf:tiny variant with
real weight changes is in plugins/transformers/tests/test_offpolicy_hf.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rolloutgym import AsyncEnv, spaces
from rolloutgym.errors import ConfigError
from rolloutgym.llm import CharRenderer, ScriptedSampler, arun_multi_turn_rollout, trajectory_tokens
from rolloutgym.llm.offpolicy import RolloutQueue, VersionedSampler, token_policy_versions, trajectory_versions

RENDERER = CharRenderer()


class Scripted:
    def __init__(self) -> None:
        self.renderer = RENDERER
        self.sampler = ScriptedSampler(RENDERER.encode, ["hello", "again"], end_token_id=CharRenderer.END)

    async def generate(self, prompts, params):
        await asyncio.sleep(0.01)
        return [await self.sampler.sample(p, q) for p, q in zip(prompts, params, strict=True)]


class TwoTurns(AsyncEnv):
    """Two assistant turns; ``between_turns`` (the trainer's weight update) runs between them."""

    between_turns: Any = None

    def __init__(self, task: int) -> None:
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.turns = 0

    async def reset(self, *, seed=None, options=None) -> Any:
        self.turns = 0
        return [{"role": "user", "content": "Say two things."}], {}

    async def step(self, action) -> Any:
        self.turns += 1
        if self.turns < 2:
            if TwoTurns.between_turns is not None:
                await TwoTurns.between_turns()
            return [{"role": "user", "content": "more"}], 0.0, False, False, {}
        return [], 1.0, True, False, {}

    async def close(self) -> None:
        return None


def test_a_weight_update_between_turns_tags_each_turn_with_its_version(monkeypatch) -> None:
    sampler = VersionedSampler(Scripted(), version=3)
    updated = []

    async def update() -> None:
        updated.append(await sampler.update(lambda: updated.append("applied")))

    monkeypatch.setattr(TwoTurns, "between_turns", update)
    batch, _ = asyncio.run(
        arun_multi_turn_rollout(sampler, [{"task_name": "t", "task": 0}], {"t": TwoTurns}, max_seq_len=512)
    )
    trajectory = batch.trajectories[0]
    assert updated == ["applied", 4]
    assert trajectory_versions(trajectory)[:2] == [3, 4]  # the partial rollout resumed on the new weights
    tags = token_policy_versions(trajectory)
    sequence = trajectory_tokens(trajectory)
    assert len(tags) == len(sequence.input_ids)
    assert {tag for tag, mask in zip(tags, sequence.loss_mask, strict=True) if mask} == {3, 4}
    assert all(tag is None for tag, mask in zip(tags, sequence.loss_mask, strict=True) if not mask)
    assert batch.metrics["retokenization_mismatches"] == 0


def test_the_queue_drops_groups_older_than_the_staleness_bound() -> None:
    sampler = VersionedSampler(Scripted())
    groups = [[{"task_name": "t", "task": index}] * 2 for index in range(6)]

    async def main():
        pulled = []
        async with RolloutQueue(
            sampler, groups, {"t": TwoTurns}, max_staleness=0, max_queued=1, max_seq_len=512, staleness="drop"
        ) as queue:
            first = await queue.get()
            pulled.append(first)
            await sampler.update()  # groups sampled before this are now one version behind
            async for batch in queue:
                pulled.append(batch)
        return pulled, queue.dropped_stale

    pulled, dropped = asyncio.run(main())
    assert len(pulled) + dropped == 6 and dropped >= 1
    assert all(not batch.metrics["staleness"]["masked"] for batch in pulled)
    for batch in pulled[1:]:
        versions = {v for t in batch.trajectories for v in trajectory_versions(t) if v is not None}
        assert versions == {1}


def test_queue_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="max_seq_len"):
        RolloutQueue(VersionedSampler(Scripted()), [], {"t": TwoTurns})
    with pytest.raises(ConfigError, match="max_staleness"):
        RolloutQueue(VersionedSampler(Scripted()), [], {"t": TwoTurns}, max_staleness=-1, max_seq_len=8)
    with pytest.raises(ConfigError, match="use one of pace, mask, drop"):
        RolloutQueue(VersionedSampler(Scripted()), [], {"t": TwoTurns}, staleness="skip", max_seq_len=8)


class Turns(AsyncEnv):
    """An episode of ``task`` assistant turns (a task of 1 turn is easy, of 6 hard: it takes longer)."""

    def __init__(self, task: int) -> None:
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.length, self.turns = int(task), 0

    async def reset(self, *, seed=None, options=None) -> Any:
        self.turns = 0
        return [{"role": "user", "content": "go"}], {}

    async def step(self, action) -> Any:
        self.turns += 1
        if self.turns < self.length:
            return [{"role": "user", "content": "more"}], 0.0, False, False, {}
        return [], float(self.length), True, False, {}

    async def close(self) -> None:
        return None


def _train(staleness: str, lengths: list[int]) -> tuple[list[Any], dict[str, Any]]:
    """A trainer that updates the weights after every group it gets, over groups of these lengths."""
    sampler = VersionedSampler(Scripted())
    groups = [[{"task_name": "t", "task": length}] * 2 for length in lengths]

    async def main() -> tuple[list[Any], dict[str, Any]]:
        pulled = []
        async with RolloutQueue(
            sampler, groups, {"t": Turns}, max_staleness=0, concurrency=3, max_seq_len=512, staleness=staleness
        ) as queue:
            async for batch in queue:
                pulled.append(batch)
                await sampler.update()
        return pulled, queue.stats

    return asyncio.run(main())


LENGTHS = [6, 1, 1, 1, 6, 1, 1]  # hard groups started first are overtaken by easy ones


def test_mask_keeps_stale_groups_rewards_and_zeroes_their_tokens() -> None:
    pulled, stats = _train("mask", LENGTHS)
    assert len(pulled) == len(LENGTHS) and stats["masked_stale"] >= 1 and stats["dropped_stale"] == 0
    masked = [batch for batch in pulled if batch.metrics["staleness"]["masked"]]
    assert len(masked) == stats["masked_stale"] and stats["fresh"] + stats["masked_stale"] == len(LENGTHS)
    for batch in masked:
        assert batch.metrics["staleness"]["lag"] >= 1 and all(not any(row) for row in batch["loss_mask"])
        assert all(reward is not None for reward in batch["total_reward"])  # rewards kept for the baseline
    fresh = [batch for batch in pulled if not batch.metrics["staleness"]["masked"]]
    assert all(any(row) for batch in fresh for row in batch["loss_mask"])


def test_drop_loses_the_hard_groups_and_pace_trains_on_every_group_fresh() -> None:
    dropped, drop_stats = _train("drop", LENGTHS)
    assert drop_stats["dropped_stale"] >= 1 and len(dropped) < len(LENGTHS)
    paced, pace_stats = _train("pace", LENGTHS)
    assert len(paced) == len(LENGTHS) and pace_stats["fresh"] == len(LENGTHS) and pace_stats["max_lag"] == 0
    assert pace_stats["paced_waits"] >= 1 and pace_stats["masked_stale"] == pace_stats["dropped_stale"] == 0
    assert sorted(batch["total_reward"][0] for batch in paced) == sorted(map(float, LENGTHS))
