"""The kit's fork check fails an env whose forks share state or restore wrongly, and passes a correct one."""

from __future__ import annotations

import asyncio
from typing import Any

import gymnasium as gym
import pytest
from rolloutgym_protocol import ForkableEnv, spaces
from rolloutgym_testing._forks import check_fork


class Tally(ForkableEnv, gym.Env[list[str], str]):
    """Observations are every action so far; ``share`` makes forks alias one list (the defect)."""

    metadata = {"render_modes": [], "nonblocking": True}

    def __init__(self, share: bool = False, forget: bool = False) -> None:
        self.observation_space = spaces.text.text()
        self.action_space = spaces.text.text()
        self.seen: list[str] = []
        self.share, self.forget = share, forget

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.seen = []
        return [], {}

    def step(self, action: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.seen.append(action)
        return list(self.seen), float(len(self.seen)), False, False, {}

    def _snapshot_state(self) -> dict[str, Any]:
        return {"seen": self.seen}

    def _restore_state(self, data: dict[str, Any]) -> None:
        if not self.share:
            self.seen = [] if self.forget else list(data["seen"])

    def _fork_blank(self) -> Any:
        blank = Tally(self.share, self.forget)
        if self.share:
            blank.seen = self.seen
        return blank


@pytest.mark.parametrize(
    ("share", "forget", "problem"), [(True, False, "the original differs"), (False, True, "a fork differs")]
)
def test_the_fork_check_catches_shared_or_lost_state(share: bool, forget: bool, problem: str) -> None:
    with pytest.raises(AssertionError, match=problem):
        asyncio.run(check_fork(lambda: Tally(share, forget), ["a", "b", "c", "d"], "", 0))


def test_the_fork_check_passes_a_correct_env() -> None:
    asyncio.run(check_fork(Tally, ["a", "b", "c", "d"], "", 0))
