"""Integers past Python's int-to-text limit in every tool call of the SQL envs (issue 26, class 3).

Before: ``submit_answer(answer=7 * 10**5000)`` (the answer is written as JSON), such a
number as a call id or a tool name, and an argument object keyed by one ended the episode
as an env error.
"""

from __future__ import annotations

import asyncio

import pytest
import rolloutgym as rg
from rolloutgym_protocol.display import int_text
from rolloutgym_testing import play_huge_number_actions
from rolloutgym_testing.huge_numbers import HUGE


@pytest.mark.parametrize("env_id", ["sql/shop-v0", "sql/shop-ops-v0"])
def test_every_tool_call_with_a_huge_number_is_answered(env_id: str, backend: str) -> None:
    assert asyncio.run(play_huge_number_actions(rg.make(env_id, task=0, backend=backend))) == []


def _call(call_id: object, name: object, **arguments: object) -> dict[str, object]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def test_a_huge_answer_is_graded_and_named_in_the_feedback() -> None:
    env = rg.make("sql/shop-v0", task=0)
    env.reset(seed=0)
    observation, *_ = env.step(_call(HUGE, HUGE))
    assert observation[0]["tool_call_id"] == int_text(HUGE)
    assert observation[0]["content"].startswith(f"error: unknown tool {int_text(HUGE)}")
    observation, reward, terminated, _, info = env.step(_call("c", "submit_answer", answer=[HUGE, -HUGE]))
    assert terminated and reward == 0.0 and observation[0]["content"] == "submitted"
    assert info["score"]["value"] == 0.0
    env.close()
