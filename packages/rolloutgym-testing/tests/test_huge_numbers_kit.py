"""The kit's huge-number actions: a sound env passes, an env that raises on them is caught."""

from __future__ import annotations

import asyncio
from typing import Any

import gymnasium as gym
from rolloutgym.registry import get_registry
from rolloutgym_testing import huge_number_actions, play_huge_number_actions


class StrOfArguments(gym.Wrapper):
    """``toy/guess-v0`` that prints the arguments into its reply, as a naive env would."""

    def step(self, action: Any) -> Any:
        for call in action.get("tool_calls") or [] if isinstance(action, dict) else []:
            str(call)  # ValueError for an int past the limit
        return self.env.step(action)


def test_a_sound_env_passes_and_one_that_str_s_arguments_is_caught() -> None:
    registry = get_registry()
    assert asyncio.run(play_huge_number_actions(registry.make("toy/guess-v0", task=0))) == []
    problems = asyncio.run(play_huge_number_actions(StrOfArguments(registry.make("toy/guess-v0", task=0))))
    assert sum("ValueError: Exceeds the limit" in problem for problem in problems) >= 6
    assert any(problem.startswith("guess.number=huge: ") for problem in problems)


def test_actions_cover_every_argument_of_every_tool() -> None:
    tools = [
        {"type": "function", "function": {"name": "a", "parameters": {"properties": {"x": {}, "y": {}}}}},
        {"type": "function", "function": {"name": "b", "parameters": {}}},
    ]
    labels = [label for label, _ in huge_number_actions(tools)]
    for prefix in ("a.x=", "a.y=", "b.x="):
        assert sum(label.startswith(prefix) for label in labels) == 6
    assert labels[-1] == "final answer [5000 digits]"
