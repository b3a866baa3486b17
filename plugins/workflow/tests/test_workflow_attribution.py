"""Scored-failure attribution of conversational workflow episodes (issue 48).

A model-driven user is played here by a small callable policy (``user_policy=`` takes any
policy object), so each case is a real episode of ``workflow/refund-conv-v0`` task 0 (Alice,
order O-5001, email alice.moreau@example.com) whose score the env attributes, or not.
"""

from __future__ import annotations

from typing import Any

import rolloutgym as rg
from rolloutgym_protocol import Score, attribution_of
from rolloutgym_workflow.attribution import attribute_episode, user_evidence
from rolloutgym_workflow.user import UserSection

ASK_ORDER = {"role": "assistant", "content": "Which order is it? Please give me the order number."}
ASK_EMAIL = {"role": "assistant", "content": "Could you give me your email so I can verify your account?"}
GIVE_UP = {"role": "assistant", "content": "Sorry, I cannot help with that."}


class _SaysInTurn:
    """A user policy that sends its replies in turn (``###STOP###`` ends the conversation)."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)

    def __call__(self, observation: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": self.replies.pop(0) if self.replies else "ok ###STOP###"}


def _play(actions: list[dict[str, Any]], user_policy: Any = None) -> Any:
    env = rg.make("workflow/refund-conv-v0", task=0, user_policy=user_policy)
    env.reset(seed=0)
    info: dict[str, Any] = {}
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return Score.from_dict(info["score"])


def test_an_oracle_pass_with_the_scripted_user_is_not_attributed() -> None:
    env = rg.make("workflow/refund-conv-v0", task=0)
    env.reset(seed=0)
    done, info = False, {}
    while not done:
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        done = terminated or truncated
    score = Score.from_dict(info["score"])
    assert score.value == 1.0 and attribution_of(score) is None


def test_a_failure_after_the_user_named_an_order_its_scenario_does_not_hold_is_the_users() -> None:
    score = _play([ASK_ORDER, GIVE_UP], _SaysInTurn("It is order O-7777.", "Thanks. ###STOP###"))
    found = attribution_of(score)
    assert score.value < 1.0 and found is not None
    assert (found.party, found.reason) == ("user", "contradicted_scenario") and "O-7777" in (found.evidence or "")


def test_an_order_the_agent_named_first_is_not_a_contradiction() -> None:
    ask = {"role": "assistant", "content": "Is it order O-7777? Which order number is it?"}
    score = _play([ask, GIVE_UP], _SaysInTurn("Yes, O-7777.", "Thanks. ###STOP###"))
    assert score.value < 1.0 and attribution_of(score) is None


def test_a_user_who_quits_when_asked_for_a_fact_it_holds_ended_early() -> None:
    score = _play([ASK_EMAIL], _SaysInTurn("Never mind. ###STOP###"))
    found = attribution_of(score)
    assert found is not None and (found.party, found.reason) == ("user", "ended_early")
    assert "email" in (found.evidence or "")


def test_a_failure_with_a_user_that_behaved_stays_the_agents() -> None:
    score = _play([ASK_ORDER, GIVE_UP], _SaysInTurn("It is O-5001.", "Thanks. ###STOP###"))
    assert score.value < 1.0 and attribution_of(score) is None


def test_a_leaked_goal_is_attributed_even_on_a_pass_and_env_crashes_come_before_the_user() -> None:
    goal = "Get a full refund for order O-5001 because the blender arrived broken and the box was crushed."
    section = UserSection(opening="Hi, a refund please.", goal=goal, facts={"order_id": "O-5001"})
    turns = [("user", section.opening), ("assistant", "What happened?"), ("user", f"My task: {goal}")]
    always, on_failure = user_evidence(section, turns, user_ended=False, user_turns=1)
    assert always is not None and always.reason == "leaked_goal" and on_failure is None
    passed = attribute_episode(Score(1.0), True, user=(always, on_failure))
    assert attribution_of(passed).reason == "leaked_goal"  # type: ignore[union-attr]
    crashed = attribute_episode(Score(0.0), False, user=(always, on_failure), env_faults=["refund: KeyError: 'x'"])
    assert (attribution_of(crashed).party, attribution_of(crashed).reason) == ("env", "tool_crashed")  # type: ignore[union-attr]
    clean = user_evidence(section, turns[:2], user_ended=False, user_turns=1)
    assert clean == (None, None) and attribute_episode(Score(0.0), False, user=clean).metadata == {}
