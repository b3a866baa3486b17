"""Branching rollouts: a trunk episode, continuations from chosen steps, the shared prefix, training rows."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import gymnasium as gym
import pytest
import rolloutgym as rg
from rolloutgym.llm.metrics import trajectory_tokens
from rolloutgym_protocol import PolicyOutput, TrajectoryGroup, spaces
from rolloutgym_protocol.errors import NotForkable


def test_every_step_branches_share_the_trunks_prefix_and_round_trip() -> None:
    env = rg.make("workflow/refund-v2", task=0)
    group = rg.rollout_tree(env, rg.make_policy("oracle"), branch_at="every", num_branches=2, seed=0)
    trunk, *branches = group.trajectories
    steps = len(trunk.steps)
    assert group.metadata["tree"] == {"branch_at": list(range(steps)), "num_branches": 2, "mode": "every"}
    assert len(branches) == 2 * steps and not group.errors
    for branch in branches:
        at = branch.metadata["branch"]["at"]
        assert branch.metadata["branch"]["parent"] == 0
        assert all(mine is theirs for mine, theirs in zip(branch.steps[:at], trunk.steps[:at], strict=True))
        assert branch.score.value == 1.0  # the oracle's plan lives in the forked env: every branch finishes it
    encoded = json.loads(json.dumps(group.to_dict()))
    assert TrajectoryGroup.from_dict(encoded).to_dict() == encoded


class _FumbleOnce:
    """Guesses by binary search but sends a malformed call at step 2 of the trunk; its branches do not."""

    def __init__(self, bad_at: int | None = 2) -> None:
        self.bad_at = bad_at

    def for_env(self, environment: Any) -> Any:
        return _Fumbling(environment, self.bad_at)


class _Fumbling:
    def __init__(self, environment: Any, bad_at: int | None) -> None:
        self.environment, self.bad_at, self.turn = environment, bad_at, 0

    def __call__(self, observation: Any) -> Any:
        self.turn += 1
        if self.turn - 1 == self.bad_at:
            return {"role": "assistant", "content": "", "tool_calls": [{"id": "x", "name": "guess", "arguments": {}}]}
        return rg.as_sync(self.environment).oracle_action()

    def fork(self, environment: Any) -> _Fumbling:
        return _Fumbling(environment, None) if environment is not None else _Fumbling(None, None)


def test_before_error_retries_the_step_that_failed() -> None:
    env = rg.make("toy/guess-v0", task=1)
    group = rg.rollout_tree(env, _FumbleOnce(), branch_at="before-error", num_branches=3, seed=0)
    trunk, *branches = group.trajectories
    assert trunk.steps[2].info["invalid_actions"] == 1
    assert group.metadata["tree"]["branch_at"] == [2] and len(branches) == 3
    for branch in branches:
        assert branch.metadata["branch"]["at"] == 2
        assert branch.steps[2].action != trunk.steps[2].action
        assert branch.steps[-1].info["invalid_actions"] == 0 and branch.score.value == 1.0


def test_chosen_steps_and_bad_arguments() -> None:
    env = rg.make("toy/guess-v0", task=1)
    group = rg.rollout_tree(env, rg.make_policy("oracle"), branch_at="1,3", num_branches=1, seed=0)
    assert [t.metadata["branch"]["at"] for t in group.trajectories[1:]] == [1, 3]
    with pytest.raises(ValueError, match="'every', 'before-error', a step index"):
        rg.rollout_tree(env, rg.make_policy("oracle"), branch_at="sometimes")
    with pytest.raises(ValueError, match="num_branches must be a positive integer"):
        rg.rollout_tree(env, rg.make_policy("oracle"), num_branches=0)


class _Plain(gym.Env[str, str]):
    observation_space = spaces.text.text()
    action_space = spaces.text.text()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        return "", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return "", 0.0, True, False, {}


def test_an_env_that_cannot_fork_is_named() -> None:
    with pytest.raises(NotForkable, match="_Plain cannot fork"):
        rg.rollout_tree(_Plain(), lambda observation: "x")


class _Counting:
    """A token-level stand-in: every action carries two sampled token ids and one observation token."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, observation: Any) -> PolicyOutput:
        self.calls += 1
        action = rg.as_sync(self.environment).oracle_action()
        return PolicyOutput(action, tokens=(10 * self.calls, 10 * self.calls + 1), prompt_tokens=(1,))

    def for_env(self, environment: Any) -> _Counting:
        episode = _Counting()
        episode.environment = environment
        return episode


def test_training_rows_mask_the_shared_prefix_once() -> None:
    env = rg.make("toy/guess-v0", task=1)
    group = rg.rollout_tree(env, _Counting(), branch_at=[2], num_branches=2, seed=0)
    trunk, branch, _ = group.trajectories
    whole, row = trajectory_tokens(trunk), trajectory_tokens(branch)
    assert whole is not None and row is not None
    assert sum(whole.loss_mask) == 2 * len(trunk.steps)  # the trunk trains on all its turns
    # The branch row has the prefix's exact tokens as context (mask 0) and trains on its own turns only.
    assert row.input_ids[:6] == whole.input_ids[:6] and row.loss_mask[:6] == (0,) * 6
    assert sum(row.loss_mask) == 2 * (len(branch.steps) - 2)
    assert len(row.turn_spans) == len(branch.steps) - 2


def test_async_trees_run_on_async_envs() -> None:
    async def run() -> TrajectoryGroup:
        env = rg.make_async("toy/guess-v0", task=3)
        try:
            return await rg.arollout_tree(env, rg.make_policy("oracle"), branch_at=0, num_branches=4, seed=1)
        finally:
            await env.close()

    group = asyncio.run(run())
    assert len(group.trajectories) == 5 and {t.score.value for t in group.trajectories} == {1.0}
