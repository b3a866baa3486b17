"""Weights that change mid-episode on a real model (hf:tiny): each turn carries the version that
sampled it, and the logprobs recorded for the turn after the update are the new weights' own."""

from __future__ import annotations

import asyncio
from typing import Any

import rolloutgym as rg
import torch
from rolloutgym import AsyncEnv, spaces
from rolloutgym.llm import arun_multi_turn_rollout
from rolloutgym.llm.offpolicy import VersionedSampler, trajectory_versions


class TwoTurns(AsyncEnv):
    """Two assistant turns; the trainer's weight update runs between them."""

    between_turns: Any = None

    def __init__(self, task: int) -> None:
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.turns = 0

    async def reset(self, *, seed=None, options=None) -> Any:
        self.turns = 0
        return [{"role": "user", "content": "Count to three."}], {}

    async def step(self, action) -> Any:
        self.turns += 1
        if self.turns < 2:
            await TwoTurns.between_turns()
            return [{"role": "user", "content": "Again."}], 0.0, False, False, {}
        return [], 1.0, True, False, {}

    async def close(self) -> None:
        return None


def logprobs_under(model: Any, context: list[int], start: int, tokens: list[int]) -> list[float]:
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([context[: start + len(tokens)]])).logits[0].float()
    values = torch.log_softmax(logits, dim=-1)
    return [float(values[start + offset - 1, token]) for offset, token in enumerate(tokens)]


def test_a_weight_update_mid_episode_is_tagged_and_used(monkeypatch) -> None:
    policy = rg.make_policy("hf:tiny", max_tokens=6, seed=0)
    model = policy.sampler.model
    saved = {name: value.detach().clone() for name, value in model.state_dict().items()}
    sampler = VersionedSampler(policy)

    def perturb() -> None:
        generator = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.5)

    async def update() -> None:
        await sampler.update(perturb)

    monkeypatch.setattr(TwoTurns, "between_turns", update)
    try:
        batch, metrics = asyncio.run(
            arun_multi_turn_rollout(sampler, [{"task_name": "t", "task": 0}], {"t": TwoTurns}, max_seq_len=1024)
        )
        trajectory = batch.trajectories[0]
        assert trajectory_versions(trajectory)[:2] == [0, 1] and metrics["retokenization_mismatches"] == 0
        first, second = trajectory.steps[0], trajectory.steps[1]
        context = list(first.observation_tokens) + list(first.policy_tokens) + list(second.observation_tokens)
        start = len(context)
        context += list(second.policy_tokens)
        new = logprobs_under(model, context, start, list(second.policy_tokens))
        assert torch.allclose(torch.tensor(new), torch.tensor(second.policy_logprobs), atol=2e-3)
        model.load_state_dict(saved)
        old = logprobs_under(model, context, start, list(second.policy_tokens))
        assert not torch.allclose(torch.tensor(old), torch.tensor(second.policy_logprobs), atol=2e-3)
    finally:
        model.load_state_dict(saved)
