"""Integers past Python's int-to-text limit in every tool call of every workflow env (issue 26, class 3).

Before: ``issue_refund(amount=7 * 10**5000)`` ended the episode as an env error (the tool
result could not be encoded, nor its fallback), as did such a number as a tool name or a
final answer, and a state holding one crashed the verifier's state diff.
"""

from __future__ import annotations

import asyncio
import json

import pytest
import rolloutgym as rg
from rolloutgym_protocol.display import int_text
from rolloutgym_testing import play_huge_number_actions
from rolloutgym_testing.huge_numbers import DIGITS, HUGE

ENVS = ["workflow/refund-v0", "workflow/refund-v1", "workflow/refund-conv-v0"]


@pytest.mark.parametrize("env_id", ENVS)
def test_every_tool_call_with_a_huge_number_is_answered(env_id: str) -> None:
    assert asyncio.run(play_huge_number_actions(rg.make(env_id, task=0))) == []


def _call(name: str, **arguments: object) -> dict[str, object]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": name, "arguments": arguments}]}


def test_a_huge_refund_is_a_tool_result_the_state_keeps_and_the_grader_scores() -> None:
    env = rg.make("workflow/refund-v0", task=0)
    env.reset(seed=0)
    order = env.unwrapped.task.reference_actions[-1]["arguments"]["order_id"]
    observation, *_ = env.step(_call("issue_refund", order_id=order, amount=HUGE))
    content = observation[0]["content"]
    assert json.loads(content)["amount"] == int_text(HUGE)  # readable JSON for the model
    observation, *_ = env.step(_call("issue_refund", order_id=order, amount=[-HUGE, {"k": HUGE}]))
    assert observation[0]["content"].startswith("error: issue_refund: argument 'amount' must be a number")
    _, reward, terminated, _, info = env.step({"role": "assistant", "content": f"Refunded {DIGITS}"})
    assert terminated and reward == 0.0
    assert info["state"]["refunds"][-1]["amount"] == HUGE  # every digit kept
    feedback = json.dumps(info["score"])
    assert int_text(HUGE) in feedback  # the state diff names the amount
    env.close()


def test_a_5000_digit_number_in_json_arguments_is_an_invalid_action() -> None:
    env = rg.make("workflow/refund-v0", task=0)
    env.reset(seed=0)
    action = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "name": "get_order", "arguments": f'{{"order_id": {DIGITS}}}'}],
    }
    observation, _, _, _, info = env.step(action)
    assert observation[0]["content"] == (
        "error: get_order: arguments are not valid JSON (a number has more than 4300 digits); send a JSON object "
        'such as {"order_id": "O-1"}'
    )
    assert info["invalid_actions"] == 1
    env.close()
