"""``gymnasium.make_vec`` on rolloutgym envs (issue 45): sync and async vectors, real envs.

Members whose ``info`` values differ in type (an int and ``None``, an int and text) are
batched into object arrays instead of crashing; async vectors run with shared memory off
(Gymnasium's shared memory holds numbers, not text), and asking for it is refused clearly.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from rolloutgym import register_gymnasium

ARITH = "toy/arith-v0"


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    register_gymnasium()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_members_with_info_of_differing_types_step_on(mode: str) -> None:
    vector = gymnasium.make_vec(ARITH, num_envs=3, mode=mode)
    try:
        observations, _ = vector.reset(seed=0)
        assert len(observations) == 3
        answer = "64"  # task 0's answer (arith-00)
        for actions in (["abc", answer, ""], [answer, "abc", "7"], ["", "", answer], [answer] * 3):
            _, rewards, terminated, _, info = vector.step(actions)  # a single-turn env ends every other step
            if terminated.any():
                extracted = info["score"]["metadata"]["extracted"]
                assert list(rewards) == [1.0 if action == answer else 0.0 for action in actions]
                assert [None if value is None else int(value) for value in extracted] == [
                    64 if action == answer else (7 if action == "7" else None) for action in actions
                ]
            vector.step(actions)  # the autoreset step
    finally:
        vector.close()


def test_batches_of_one_type_stay_typed_and_shared_memory_is_refused() -> None:
    vector = gymnasium.make_vec(ARITH, num_envs=2)
    vector.reset(seed=0)
    _, _, _, _, info = vector.step(["64", "63"])
    assert info["score"]["metadata"]["extracted"].dtype == np.int64  # as Gymnasium batches them
    assert info["score"]["value"].dtype == np.float64
    vector.close()
    with pytest.raises(ValueError, match="shared memory holds numeric arrays only"):
        gymnasium.make_vec(ARITH, num_envs=2, mode="async", shared_memory=True)
    with pytest.raises(ValueError, match="mode must be"):
        gymnasium.make_vec(ARITH, num_envs=2, mode="threads")


def test_a_chat_tool_env_vectorizes() -> None:
    vector = gymnasium.make_vec("toy/guess-v0", num_envs=2, mode="async")
    try:
        observations, _ = vector.reset(seed=0)
        call = {"role": "assistant", "content": "", "tool_calls": [{"name": "guess", "arguments": {"number": 50}}]}
        bad = {"role": "assistant", "content": "", "tool_calls": [{"name": "guess", "arguments": {"number": "x"}}]}
        for _ in range(3):
            _, rewards, _, _, info = vector.step([call, bad])
            assert rewards.shape == (2,)
    finally:
        vector.close()
