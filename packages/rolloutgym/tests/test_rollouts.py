"""The rollout engine: budgets, seeds, validation, failure isolation, cancellation."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import gymnasium as gym
import pytest
from rolloutgym import AsyncEnv, PolicyOutput, Score, arollout, arollout_group, rollout, rollout_group
from rolloutgym.errors import InvalidAction, InvalidStepResult


class Walk(gym.Env):
    """Terminates after ``length`` steps; reward = action; observation = step count."""

    action_space = gym.spaces.Discrete(5)
    observation_space = gym.spaces.Discrete(1000)

    def __init__(self, length: int = 3, reward: Any = None, flag: Any = None) -> None:
        self.length = length
        self.reward = reward
        self.flag = flag
        self.seeds: list[int | None] = []
        self.closed = False
        self.count = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.seeds.append(seed)
        self.count = 0
        return 0, {"options": options}

    def step(self, action):
        self.count += 1
        reward = float(action) if self.reward is None else self.reward
        terminated = self.count >= self.length if self.flag is None else self.flag
        return self.count, reward, terminated, False, {}

    def close(self):
        self.closed = True


class AsyncWalk(AsyncEnv):
    action_space = gym.spaces.Discrete(5)
    observation_space = gym.spaces.Discrete(1000)
    open_count = 0

    def __init__(self, length: int = 3, delay: float = 0.0, fail_at: int | None = None) -> None:
        self.length, self.delay, self.fail_at = length, delay, fail_at
        self.count = 0
        self.closed = False
        AsyncWalk.open_count += 1

    async def reset(self, *, seed=None, options=None):
        await super().reset(seed=seed, options=options)
        self.count = 0
        return 0, {}

    async def step(self, action):
        await asyncio.sleep(self.delay)
        self.count += 1
        if self.fail_at is not None and self.count == self.fail_at:
            raise ConnectionError("env backend went away")
        return self.count, 1.0, self.count >= self.length, False, {}

    async def close(self):
        if not self.closed:
            self.closed = True
            AsyncWalk.open_count -= 1


def test_rollout_records_steps_and_does_not_close() -> None:
    env = Walk()
    trajectory = rollout(
        env, lambda observation: PolicyOutput(2, {"note": 1}, tokens=[5, 6], logprobs=[-0.5, -0.25]), seed=4
    )
    assert len(trajectory) == 3 and trajectory.terminated and not trajectory.truncated
    assert trajectory.stop_reason == "terminated"
    assert trajectory.rewards == (2.0, 2.0, 2.0)
    assert trajectory.steps[0].policy_tokens == (5, 6)
    # policy_info keeps the policy's info and, as in rolloutlib 0.2.0, the sampling fields
    assert trajectory.steps[0].policy_info == {"note": 1, "tokens": (5, 6), "logprobs": (-0.5, -0.25)}
    assert env.seeds == [4] and not env.closed


def test_max_steps_is_a_collection_truncation() -> None:
    trajectory = rollout(Walk(length=10), lambda o: 1, max_steps=2)
    assert len(trajectory) == 2 and trajectory.truncated and not trajectory.terminated
    assert trajectory.stop_reason == "max_steps"
    empty = rollout(Walk(), lambda o: 1, max_steps=0)
    assert empty.observations == (0,) and empty.truncated
    with pytest.raises(ValueError, match="non-negative"):
        rollout(Walk(), lambda o: 1, max_steps=-1)


def test_timeout_truncates_with_a_stop_reason() -> None:
    def slow(observation):
        time.sleep(0.03)
        return 1

    trajectory = rollout(Walk(length=100), slow, timeout=0.1)
    assert trajectory.truncated and trajectory.stop_reason == "timeout" and 1 <= len(trajectory) < 100

    async def main():
        return await arollout(AsyncWalk(length=100, delay=0.02), lambda o: 1, timeout=0.1)

    trajectory = asyncio.run(main())
    assert trajectory.truncated and trajectory.stop_reason == "timeout" and len(trajectory) < 100


@pytest.mark.parametrize(
    ("reward", "flag", "match"),
    [(float("nan"), None, "reward nan"), (1.0, 1, "terminated=1"), ("x", None, "rewards must be numbers")],
)
def test_bad_step_results_name_the_env_and_step(reward, flag, match) -> None:
    with pytest.raises(InvalidStepResult, match=match) as raised:
        rollout(Walk(reward=reward, flag=flag), lambda o: 1)
    assert "Walk.step() at step 0" in str(raised.value)


def test_check_actions_rejects_out_of_space_actions() -> None:
    with pytest.raises(InvalidAction, match="not in Walk.action_space"):
        rollout(Walk(), lambda o: 99, check_actions=True)


def test_sync_rollout_rejects_async_policy_and_env() -> None:
    async def policy(observation):
        return 1

    with pytest.raises(TypeError, match="synchronous policies"):
        rollout(Walk(), policy)
    with pytest.raises(TypeError, match="arollout"):
        rollout(AsyncWalk(), lambda o: 1)


def test_arollout_accepts_a_sync_gymnasium_env() -> None:
    env = Walk()

    async def policy(observation):
        return 3

    trajectory = asyncio.run(arollout(env, policy, seed=1))
    assert trajectory.total_reward == 9.0 and env.seeds == [1]


def test_group_seeds_and_options() -> None:
    envs: list[Walk] = []

    def make(item):
        envs.append(Walk())
        return envs[-1]

    group = rollout_group("item", make, lambda o: 1, num_rollouts=3, seed=10, options={"a": 1}, item_id="t")
    assert [env.seeds for env in envs] == [[10], [11], [12]]
    assert all(env.closed for env in envs)
    assert group.trajectories[0].initial_info == {"options": {"a": 1}}
    assert [t.metadata["seed"] for t in group.trajectories] == [10, 11, 12]
    envs.clear()
    asyncio.run(arollout_group("item", make, lambda o: 1, num_rollouts=2, seed=[7, 3], concurrency=2))
    assert sorted(env.seeds[0] for env in envs) == [3, 7]
    with pytest.raises(ValueError, match="one seed per rollout"):
        rollout_group("item", make, lambda o: 1, num_rollouts=2, seed=[1])


def test_group_rewards_are_terminal_scores() -> None:
    class Scored(Walk):
        def step(self, action):
            observation, reward, terminated, truncated, info = super().step(action)
            if terminated:
                info = Score(0.25).as_info()
            return observation, reward, terminated, truncated, info

    group = rollout_group(None, lambda item: Scored(), lambda o: 1, num_rollouts=2)
    assert group.rewards == (0.25, 0.25) and group.item_id == "0"


def test_fault_injection_every_member_accounted_for() -> None:
    """1,000 rollouts with 10% env errors and 5% policy errors: nothing lost, errors typed."""
    generator = random.Random(0)
    env_fails = {i for i in range(1000) if generator.random() < 0.10}
    policy_fails = {i for i in range(1000) if generator.random() < 0.05} - env_fails

    class Member(AsyncEnv):
        action_space = gym.spaces.Discrete(2)
        observation_space = gym.spaces.Discrete(2000)

        def __init__(self, index: int) -> None:
            self.index = index

        async def reset(self, *, seed=None, options=None):
            return self.index, {}

        async def step(self, action):
            if self.index in env_fails:
                raise ConnectionResetError(f"env {self.index} crashed")
            return self.index, 1.0, True, False, {}

    counter = iter(range(1000))

    def make(item):
        return Member(next(counter))

    async def policy(observation):
        await asyncio.sleep(0)
        if observation in policy_fails:
            raise TimeoutError(f"model timed out for {observation}")
        return 1

    group = asyncio.run(arollout_group("x", make, policy, num_rollouts=1000, concurrency=64))
    assert group.num_members == 1000
    assert len(group.trajectories) == 1000 - len(env_fails) - len(policy_fails)
    assert all(reward == 1.0 for reward in group.rewards)  # no error became a 0 reward
    by_where = {}
    for error in group.errors:
        by_where.setdefault(error.where, set()).add(error.error_type)
    assert by_where == {"env": {"ConnectionResetError"}, "policy": {"TimeoutError"}}
    assert sorted(e.member for e in group.errors) == sorted(env_fails | policy_fails)
    assert [t.metadata["member"] for t in group.trajectories] == sorted(set(range(1000)) - env_fails - policy_fails)


def test_on_error_raise_is_fail_fast_and_closes_everything() -> None:
    AsyncWalk.open_count = 0
    made = iter(range(100))

    def make(item):
        index = next(made)
        return AsyncWalk(length=5, delay=0.01, fail_at=2 if index == 3 else None)

    with pytest.raises(ConnectionError, match="went away"):
        asyncio.run(arollout_group("x", make, lambda o: 1, num_rollouts=8, concurrency=8, on_error="raise"))
    assert AsyncWalk.open_count == 0


def test_make_env_failures_are_recorded() -> None:
    def make(item):
        raise FileNotFoundError("fixture missing")

    group = rollout_group("x", make, lambda o: 1, num_rollouts=2)
    assert [(e.where, e.error_type) for e in group.errors] == [("make_env", "FileNotFoundError")] * 2


def test_cancelling_a_group_closes_every_env_and_leaves_no_task() -> None:
    AsyncWalk.open_count = 0

    async def main() -> None:
        task = asyncio.ensure_future(
            arollout_group(
                "x", lambda item: AsyncWalk(length=1000, delay=0.01), lambda o: 1, num_rollouts=50, concurrency=20
            )
        )
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert AsyncWalk.open_count == 0
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert others == []

    asyncio.run(main())


def test_group_argument_errors() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        rollout_group("x", lambda i: Walk(), lambda o: 1, num_rollouts=0)
    with pytest.raises(ValueError, match="concurrency"):
        asyncio.run(arollout_group("x", lambda i: Walk(), lambda o: 1, concurrency=0))


def test_sync_and_async_paths_normalise_policy_output_steps_alike() -> None:
    """An int reward and numpy.bool_ flags become float/bool on both paths, so the trajectory is JSON-safe."""
    import json

    import numpy

    class Loose(Walk):
        def step(self, action):
            self.count += 1
            return self.count, 1, numpy.bool_(self.count >= self.length), numpy.bool_(False), {}

    def policy(observation):
        return PolicyOutput(1, tokens=(7,), logprobs=(-0.5,))

    synchronous = rollout(Loose(length=2), policy)
    asynchronous = asyncio.run(arollout(Loose(length=2), policy))
    for trajectory in (synchronous, asynchronous):
        step = trajectory.steps[-1]
        assert (type(step.reward), type(step.terminated), type(step.truncated)) == (float, bool, bool)
        assert step.policy_tokens == (7,)
        json.dumps(trajectory.to_dict())
    assert synchronous.to_dict() == asynchronous.to_dict()


def test_failure_records_name_where_and_step_without_tagging_the_exception() -> None:
    class Fails(Exception):
        __slots__ = ()  # cannot take attributes: the location must not travel on the exception

    def policy(observation):
        if observation == 2:
            raise Fails("no answer at step 2")
        return 1

    group = rollout_group("x", lambda item: Walk(length=5), policy, num_rollouts=2)
    assert [(e.where, e.step, e.error_type) for e in group.errors] == [("policy", 2, "Fails")] * 2
    agroup = asyncio.run(arollout_group("x", lambda item: AsyncWalk(length=5, fail_at=3), lambda o: 1, num_rollouts=2))
    assert [(e.where, e.step) for e in agroup.errors] == [("env", 2)] * 2


@pytest.mark.parametrize("fail_at", [1, 2, 3, 5])
def test_a_member_failing_at_any_step_keeps_the_steps_it_played(fail_at: int) -> None:
    """The member coroutine keeps no list before a second step: the partial record must still be exact."""
    group = asyncio.run(
        arollout_group("x", lambda item: AsyncWalk(length=9, fail_at=fail_at), lambda o: 1, num_rollouts=2, seed=4)
    )
    assert not group.trajectories
    for member, error in enumerate(group.errors):
        assert (error.where, error.step, error.member) == ("env", fail_at - 1, member)
        assert error.partial is not None and error.partial.stop_reason == "error"
        assert [step.next_observation for step in error.partial.steps] == list(range(1, fail_at))
        assert error.partial.metadata == {"member": member}


@pytest.mark.parametrize("length", [1, 2, 3, 7])
def test_member_trajectories_match_the_single_episode_api(length: int) -> None:
    group = asyncio.run(arollout_group("x", lambda item: AsyncWalk(length=length), lambda o: 2, num_rollouts=3, seed=1))
    alone = asyncio.run(arollout(AsyncWalk(length=length), lambda o: 2, seed=1))
    for member, trajectory in enumerate(group.trajectories):
        assert type(trajectory.steps) is tuple and len(trajectory.steps) == length
        assert [s.to_dict() for s in trajectory.steps] == [s.to_dict() for s in alone.steps]
        assert trajectory.metadata["member"] == member and trajectory.metadata["seed"] == 1 + member
        assert trajectory.metadata["elapsed_seconds"] >= 0.0
        assert (trajectory.terminated, trajectory.stop_reason) == (True, "terminated")


def test_a_mapping_reset_info_is_kept_as_a_dict() -> None:
    from types import MappingProxyType

    class ProxyInfo(AsyncWalk):
        async def reset(self, *, seed=None, options=None):
            await super().reset(seed=seed, options=options)
            return 0, MappingProxyType({"level": 3})

    group = asyncio.run(arollout_group("x", lambda item: ProxyInfo(), lambda o: 1, num_rollouts=2))
    trajectory = asyncio.run(arollout(ProxyInfo(), lambda o: 1))
    for kept in (*group.trajectories, trajectory, rollout(gym.wrappers.PassiveEnvChecker(Walk()), lambda o: 1)):
        assert type(kept.initial_info) is dict
    assert group.trajectories[0].initial_info == trajectory.initial_info == {"level": 3}


def test_a_member_cancelled_before_it_starts_opens_no_env() -> None:
    from rolloutgym.rollouts import run_member

    made: list[Any] = []

    async def main() -> None:
        task = asyncio.ensure_future(run_member("x", lambda item: made.append(AsyncWalk()) or made[-1], lambda o: 1, 0))
        task.cancel()  # before its first step
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert made == []


def test_release_hears_whether_the_member_was_healthy() -> None:
    from rolloutgym.rollouts import run_member

    heard: list[tuple[int, bool]] = []

    async def release(environment: Any, healthy: bool) -> None:
        heard.append((environment.fail_at or 0, healthy))

    async def main() -> list[Any]:
        return [
            await run_member("x", lambda item, f=fail_at: AsyncWalk(fail_at=f), lambda o: 1, 0, release=release)
            for fail_at in (None, 2)
        ]

    ok, failed = asyncio.run(main())
    assert ok.stop_reason == "terminated" and failed.where == "env"
    assert heard == [(0, True), (2, False)]


@pytest.mark.parametrize("timeout", [None, 5.0])
@pytest.mark.parametrize("made", [None, 3, "env", {"reset": 1}])
def test_make_env_returning_no_environment_is_a_clear_make_env_record(made: Any, timeout: float | None) -> None:
    group = asyncio.run(arollout_group("x", lambda item: made, lambda o: 1, num_rollouts=2, timeout=timeout))
    assert not group.trajectories
    for error in group.errors:
        assert (error.where, error.error_type) == ("make_env", "TypeError")
        assert f"make_env returned {type(made).__name__}, not an environment" in error.error_message
        assert "AsyncEnv or a gymnasium.Env" in error.error_message


def test_a_duck_typed_env_without_close_runs() -> None:
    class Duck:
        async def reset(self, *, seed=None, options=None):
            return 0, {}

        async def step(self, action):
            return 1, 1.0, True, False, {}

    group = asyncio.run(arollout_group("x", lambda item: Duck(), lambda o: 1, num_rollouts=2))
    assert [t.total_reward for t in group.trajectories] == [1.0, 1.0] and not group.errors
