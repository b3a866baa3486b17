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
            sampler, groups, {"t": TwoTurns}, max_staleness=0, max_queued=1, max_seq_len=512
        ) as queue:
            first = await queue.get()
            pulled.append(first)
            await sampler.update()  # groups sampled before this are now one version behind
            async for batch in queue:
                pulled.append(batch)
        return pulled, queue.dropped_stale

    pulled, dropped = asyncio.run(main())
    assert len(pulled) + dropped == 6 and dropped >= 1
    for batch in pulled[1:]:
        versions = {v for t in batch.trajectories for v in trajectory_versions(t) if v is not None}
        assert versions == {1}


def test_queue_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="max_seq_len"):
        RolloutQueue(VersionedSampler(Scripted()), [], {"t": TwoTurns})
    with pytest.raises(ConfigError, match="max_staleness"):
        RolloutQueue(VersionedSampler(Scripted()), [], {"t": TwoTurns}, max_staleness=-1, max_seq_len=8)
