"""Forking an episode: snapshot, restore, fork; their errors; wrappers and adapters pass them through."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import gymnasium as gym
import pytest
from rolloutgym_protocol import (
    AsyncEnv,
    AsyncForkableEnv,
    AsyncRewardWrapper,
    EnvState,
    ForkableEnv,
    afork,
    as_async,
    as_sync,
    can_fork,
    forking,
    spaces,
)
from rolloutgym_protocol.errors import NotForkable, StateError


class Counter(ForkableEnv, gym.Env[list[int], int]):
    """Appends each action to a list; reward is the action plus a draw from np_random."""

    metadata = {"render_modes": [], "nonblocking": True}

    def __init__(self, task: str = "a") -> None:
        self.task = {"id": task}
        self.observation_space = spaces.text.text()
        self.action_space = spaces.text.text()
        self.seen: list[int] = []
        self.blob = b""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.seen = []
        return list(self.seen), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.seen.append(action)
        self.blob += bytes([action % 256])
        return list(self.seen), float(action) + float(self.np_random.random()), False, False, {}

    def _snapshot_state(self) -> dict[str, Any]:
        return {"seen": self.seen, "blob": self.blob}

    def _restore_state(self, data: dict[str, Any]) -> None:
        self.seen = [int(value) for value in data["seen"]]
        self.blob = data["blob"]


class Plain(gym.Env[int, int]):
    observation_space = spaces.text.text()
    action_space = spaces.text.text()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return 0, {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return 0, 0.0, False, False, {}


class AsyncCounter(AsyncForkableEnv, AsyncEnv[list[int], int]):
    def __init__(self) -> None:
        self.observation_space = spaces.text.text()
        self.action_space = spaces.text.text()
        self.seen: list[int] = []

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        await super().reset(seed=seed)
        self.seen = []
        return [], {}

    async def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.seen.append(action)
        return list(self.seen), float(self.np_random.random()), False, False, {}

    async def _snapshot_state(self) -> dict[str, Any]:
        return {"seen": self.seen}

    async def _restore_state(self, data: dict[str, Any]) -> None:
        self.seen = list(data["seen"])


class Halve(AsyncRewardWrapper[Any, Any]):
    async def reward(self, reward: float) -> float:
        return reward / 2


def _started(steps: int = 3) -> Counter:
    env = Counter()
    env.reset(seed=7)
    for action in range(steps):
        env.step(action)
    return env


def test_forks_continue_like_the_original_and_share_nothing() -> None:
    env = _started()
    left, right = env.fork(2)
    left.step(99)  # a different branch: must not touch env or right
    assert env.step(5) == right.step(5)
    assert env.seen == right.seen == [0, 1, 2, 5] and left.seen == [0, 1, 2, 99]
    assert left.blob == b"\x00\x01\x02c" and env.blob == b"\x00\x01\x02\x05"


def test_a_stored_state_restores_into_a_fresh_env() -> None:
    env = _started()
    text = env.snapshot().to_json()
    fresh = Counter()
    fresh.restore(EnvState.from_json(text))
    assert fresh.step(4) == env.step(4)
    assert json.loads(text)["blobs"] == {"blob": "AAEC"}


def test_mismatched_states_are_refused_in_one_line() -> None:
    state = _started().snapshot()
    with pytest.raises(StateError, match="task 'a', this env runs task 'b'"):
        Counter("b").restore(state)
    other = EnvState("tests:Other", 1, None, None, "{}")
    with pytest.raises(StateError, match="belongs to tests:Other"):
        Counter().restore(other)
    newer = EnvState(state.kind, 2, None, "a", state.payload)
    with pytest.raises(StateError, match="version 2 .* reads version 1"):
        Counter().restore(newer)
    tagged = Counter()
    tagged.rolloutgym_env_id = "demo/other-v0"  # type: ignore[attr-defined]
    stamped = EnvState(state.kind, 1, "demo/counter-v0", "a", state.payload)
    with pytest.raises(StateError, match="env demo/counter-v0, not demo/other-v0"):
        tagged.restore(stamped)
    with pytest.raises(StateError, match="takes an EnvState"):
        Counter().restore(json.loads(state.to_json()))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json", "not JSON"),
        ("[" * 100_000, "nested too deeply"),
        ('{"format": "pickle"}', "not an env state"),
        ('{"format": "rolloutgym/env-state", "format_version": 9}', "format_version 9"),
        ('{"format": "rolloutgym/env-state", "format_version": 1, "kind": "x"}', "'kind'"),
        ('{"format": "rolloutgym/env-state", "format_version": 1, "kind": "a:B", "version": "1"}', "'version'"),
        (
            '{"format": "rolloutgym/env-state", "format_version": 1, "kind": "a:B", "version": 1, '
            '"blobs": {"x": "@@"}}',
            "base64",
        ),
    ],
)
def test_corrupt_state_text_is_named(text: str, match: str) -> None:
    with pytest.raises(StateError, match=match):
        EnvState.from_json(text)


def test_hostile_data_is_a_state_error_not_a_traceback() -> None:
    state = _started().snapshot()
    data = json.loads(state.to_json())
    data["data"]["seen"] = "__import__('os')"  # a string where ints belong: read as data, refused
    with pytest.raises(StateError, match="could not restore this state"):
        Counter().restore(EnvState.from_dict(data))
    del data["data"]["seen"]
    with pytest.raises(StateError, match="could not restore"):
        Counter().restore(EnvState.from_dict(data))
    data["data"]["__np_random__"] = {"bit_generator": "os.system", "state": {}}
    with pytest.raises(StateError, match="random generator is malformed"):
        Counter().restore(EnvState.from_dict(data))


def test_an_env_that_cannot_fork_says_so() -> None:
    assert not can_fork(Plain()) and can_fork(Counter())
    with pytest.raises(NotForkable, match="Plain cannot fork: it does not implement snapshot/restore"):
        forking.fork(Plain())
    with pytest.raises(NotForkable, match="Plain cannot fork"):
        asyncio.run(afork(as_async(Plain())))
    with pytest.raises(ValueError, match="positive integer"):
        Counter().fork(0)


def test_gymnasium_wrappers_and_adapters_are_forked_with_the_env() -> None:
    env = gym.wrappers.TimeLimit(Counter(), max_episode_steps=3)
    env.reset(seed=3)
    env.step(0)
    (child,) = forking.fork(env)
    assert isinstance(child, gym.wrappers.TimeLimit) and child.env is not env.env
    assert child.step(1)[:2] == env.step(1)[:2]
    assert child.step(2)[3] is True and env.env.seen == [0, 1]  # the wrapper's step count came along

    async def adapted() -> None:
        wrapped = Halve(as_async(_started()))
        children = await wrapped.fork(2)
        assert all(isinstance(child, Halve) for child in children)
        assert await children[0].step(3) == await wrapped.step(3)
        assert children[1].env.env.seen == [0, 1, 2]

    asyncio.run(adapted())


def test_async_envs_fork_and_sync_views_of_them_too() -> None:
    async def run() -> AsyncCounter:
        env = AsyncCounter()
        await env.reset(seed=1)
        await env.step(1)
        (child,) = await env.fork()
        assert await child.step(2) == await env.step(2)
        return env

    env = asyncio.run(run())
    view = as_sync(env)
    try:
        (child,) = forking.fork(view)
        assert child.step(8) == view.step(8)
        state = forking.snapshot(view)
        assert json.loads(state.payload)["seen"] == [1, 2, 8]
        child.close()
    finally:
        view.close()
