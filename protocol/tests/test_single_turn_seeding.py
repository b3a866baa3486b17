"""SingleTurnEnv seeds ``np_random`` when first read (issue 49): every reader sees what eager seeding gave."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils import seeding
from rolloutgym_protocol import SingleTurnEnv, spaces


class Draw(SingleTurnEnv):
    """A prompt drawn from ``np_random`` at reset (an env that does read it)."""

    action_space = spaces.text.text()
    observation_space = spaces.text.text()

    def initial_observation(self, *, options: Any) -> tuple[str, dict[str, Any]]:
        return str(self.np_random.integers(1_000_000)), {}

    def evaluate(self, action: Any) -> float:
        return 1.0


class Quiet(Draw):
    """Never reads ``np_random`` (most single-turn envs)."""

    def initial_observation(self, *, options: Any) -> tuple[str, dict[str, Any]]:
        return "q?", {}


def eager(seed: int) -> Any:
    return seeding.np_random(seed)[0]


def test_a_seeded_reset_draws_what_eager_seeding_draws() -> None:
    env = Draw()
    observation, _ = env.reset(seed=7)
    assert observation == str(eager(7).integers(1_000_000))
    assert env.np_random_seed == 7
    again, _ = env.reset(seed=7)
    assert again == observation


def test_an_unread_seed_is_kept_until_read_and_a_later_unseeded_reset_keeps_it() -> None:
    env = Quiet()
    env.reset(seed=11)
    env.reset()  # gymnasium: reset(seed=None) keeps the generator
    assert env.np_random.random() == eager(11).random()
    assert env.np_random_seed == 11
    env.reset(seed=12)
    assert env._np_random.random() == eager(12).random()  # the attribute forking reads


def test_a_generator_set_directly_wins_over_a_pending_seed() -> None:
    env = Quiet()
    env.reset(seed=3)
    generator = eager(99)
    env.np_random = generator
    assert env.np_random is generator
    assert env.np_random_seed == -1


@pytest.mark.parametrize("seed", [-1, 1.5, "3"])
def test_a_seed_gymnasium_refuses_is_refused_at_reset(seed: Any) -> None:
    with pytest.raises(gym.error.Error, match="Seed must be"):
        Quiet().reset(seed=seed)


def test_a_snapshot_after_a_seeded_reset_keeps_the_generator() -> None:
    env = Quiet()
    env.reset(seed=5)
    state = env.snapshot()
    first = env.np_random.random()
    env.restore(state)
    assert env.np_random.random() == first == eager(5).random()
