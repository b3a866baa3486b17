"""What the engine keeps per trajectory (issue 19): no empty dict of its own, the env's values as they are.

``benchmarks/group_throughput.py`` measures the bytes; these tests pin the behaviour behind
them: an env's empty ``info``/reset info is replaced by the shared read-only
``SHARED_EMPTY``, a non-empty one is kept as the env returned it, and the records still read,
compare and serialise as before.
"""

from __future__ import annotations

import asyncio
import json

import gymnasium as gym
import pytest
from rolloutgym import AsyncEnv, PolicyOutput, Step, arollout_group, rollout
from rolloutgym_protocol.records import SHARED_EMPTY


class Counting(gym.Env):
    """Two steps; the second step's info is non-empty."""

    action_space = gym.spaces.Discrete(2)
    observation_space = gym.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        self.count = 0
        return 0, {}

    def step(self, action):
        self.count += 1
        info = {"count": self.count} if self.count == 2 else {}
        return self.count, 0.5, self.count == 2, False, info


class AsyncOneTurn(AsyncEnv):
    action_space = gym.spaces.Discrete(2)
    observation_space = gym.spaces.Discrete(2)

    async def reset(self, *, seed=None, options=None):
        return 0, {"prompt": "hi"}

    async def step(self, action):
        return 1, 1.0, True, False, {}


def test_sync_rollout_shares_empty_infos_and_keeps_the_envs_own() -> None:
    trajectory = rollout(Counting(), lambda observation: 1)
    first, second = trajectory.steps
    assert trajectory.initial_info is SHARED_EMPTY
    assert first.info is SHARED_EMPTY and first.policy_info is SHARED_EMPTY
    assert second.info == {"count": 2} and type(second.info) is dict
    assert first == Step(0, 1, 0.5, 1, False, False)
    assert trajectory.total_reward == 1.0
    assert json.loads(json.dumps(trajectory.to_dict()))["initial_info"] == {}


def test_group_members_keep_their_metadata_and_the_envs_reset_info() -> None:
    async def policy(observation):
        await asyncio.sleep(0)
        return PolicyOutput(1)

    group = asyncio.run(arollout_group(0, lambda item: AsyncOneTurn(), policy, num_rollouts=4, concurrency=2))
    assert [t.metadata["member"] for t in group.trajectories] == [0, 1, 2, 3]
    for trajectory in group.trajectories:
        assert trajectory.initial_info == {"prompt": "hi"} and type(trajectory.initial_info) is dict
        step = trajectory.steps[0]
        assert step.info is SHARED_EMPTY and step.policy_info is SHARED_EMPTY
        trajectory.metadata["note"] = "trajectory metadata stays a dict of its own"
    assert group.rewards == (1.0, 1.0, 1.0, 1.0)
    assert all(score.metadata is SHARED_EMPTY for score in group.scores)


def test_sampling_fields_still_reach_policy_info() -> None:
    def policy(observation):
        return PolicyOutput(1, tokens=(5, 6), logprobs=(-0.5, -0.25), info={"note": 1})

    step = rollout(Counting(), policy, max_steps=1).steps[0]
    assert step.policy_info == {"note": 1, "tokens": (5, 6), "logprobs": (-0.5, -0.25)}
    assert step.policy_tokens == (5, 6) and step.policy_logprobs == (-0.5, -0.25)


def test_a_step_info_is_read_only_only_when_it_was_empty() -> None:
    first, second = rollout(Counting(), lambda observation: 1).steps
    second.info["added"] = True  # the env's own dict, as before
    with pytest.raises(TypeError, match="read-only"):
        first.info["added"] = True
