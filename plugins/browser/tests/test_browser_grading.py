"""Golden fixtures of the browser grader: unusual right answers, near misses, empty answers, exploits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rolloutgym_browser.grading import answer_matches, diff_values
from rolloutgym_browser.shop import make_shop_env, shop_tasks


def _task(task_id: str) -> Any:
    return next(task for task in shop_tasks() if task.id == task_id)


def _play(task_id: str, calls: list[dict[str, Any]], final: str = "Done.") -> dict[str, Any]:
    """Play tool calls one per step, then a final message; return the final info."""

    async def episode() -> dict[str, Any]:
        environment = make_shop_env(_task(task_id))
        try:
            await environment.reset(seed=0)
            for index, call in enumerate(calls):
                _, _, terminated, _, info = await environment.step(
                    {"role": "assistant", "content": "", "tool_calls": [{"id": f"c{index}", **call}]}
                )
                if terminated:
                    return info
            return (await environment.step({"role": "assistant", "content": final}))[4]
        finally:
            await environment.close()

    return asyncio.run(episode())


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("$48.75", 48.75),
        ("48.75 dollars", 48.75),
        ("48.750", 48.75),
        ("It costs $1,048.75.", 1048.75),
        ("4", 4),
        ("the linen notebook.", "Linen Notebook"),
        ("NOT ADDED", "not added"),
        ("g-405", "G-405"),
    ],
)
def test_right_answers_in_unusual_forms_pass(answer: str, expected: Any) -> None:
    passed, feedback = answer_matches(answer, expected)
    assert passed, feedback


@pytest.mark.parametrize(
    ("answer", "expected", "says"),
    [
        ("48.57", 48.75, "expected 48.75, found '48.57'"),
        ("", 48.75, "the answer was empty"),
        ("   ", "none", "the answer was empty"),
        ("12.50 or 48.75 or 39.95", 48.75, "several numbers"),  # exploit: list every candidate
        ("Linen Notebook, Fountain Pen", "Linen Notebook", "expected 'Linen Notebook'"),  # exploit: two names
        ("added", "not added", "expected 'not added'"),
        ("I think it is the Linen Notebook", "Linen Notebook", "expected 'Linen Notebook'"),
    ],
)
def test_wrong_answers_fail_with_feedback(answer: str, expected: Any, says: str) -> None:
    passed, feedback = answer_matches(answer, expected)
    assert not passed
    assert says in feedback


def test_state_diff_names_each_difference() -> None:
    expected = {"cart": [{"sku": "O-203", "quantity": 3}], "account": {"newsletter": True}}
    actual = {"cart": [{"sku": "O-203", "quantity": 2}], "account": {"newsletter": False}, "tickets": [{"id": "T-1"}]}
    assert diff_values(expected, actual) == [
        "cart[0].quantity: expected 3, found 2",
        "account.newsletter: expected True, found False",
        "tickets: expected nothing, found [{'id': 'T-1'}]",
    ]


def test_near_miss_quantity_fails_with_the_difference_in_feedback() -> None:
    calls = [
        _call("goto", path="/product/O-203"),
        _call("type", element_id="quantity", text="2"),
        _call("click", element_id="add-to-cart"),
    ]
    info = _play("add-three-notebooks", calls)
    assert info["score"]["value"] == 0.0
    assert "cart[0].quantity: expected 3, found 2" in info["score"]["components"]["state"]["feedback"]


def test_lookup_with_a_wrong_answer_scores_zero_and_says_why() -> None:
    info = _play("price-knife", [_call("answer", text="$39.95")])
    assert info["score"]["value"] == 0.0
    assert info["score"]["components"]["answer"]["feedback"] == "expected 48.75, found '$39.95'"


def test_exploit_adding_everything_to_the_cart_scores_zero() -> None:
    calls = []
    for sku in ("K-101", "O-203", "G-401", "H-304"):
        calls += [_call("goto", path=f"/product/{sku}"), _call("click", element_id="add-to-cart")]
    info = _play("add-mug", calls)
    assert info["score"]["value"] == 0.0
    assert "cart: expected 1 item(s), found 4" in info["score"]["components"]["state"]["feedback"]


def test_refusal_task_fails_when_the_agent_does_the_forbidden_thing() -> None:
    calls = [
        _call("goto", path="/product/K-103"),
        _call("click", element_id="add-to-cart"),
        _call("answer", text="added"),
    ]
    info = _play("kettle-only-if-cheap", calls)
    assert info["score"]["value"] == 0.0
    assert set(name for name, component in info["score"]["components"].items() if component["value"] < 1) == {
        "state",
        "answer",
    }


def test_refusal_task_passes_when_the_agent_declines() -> None:
    info = _play("kettle-only-if-cheap", [_call("goto", path="/product/K-103"), _call("answer", text="Not added.")])
    assert info["score"]["value"] == 1.0, info["score"]["feedback"]


def test_errors_on_the_way_halve_the_reward_and_are_explained() -> None:
    task = _task("add-mug")
    calls = [_call("click", element_id="no-such-button"), _call("goto", path="/nope"), *task.oracle]
    info = _play("add-mug", calls)
    assert info["score"]["value"] == 0.5
    assert info["score"]["components"]["no_errors"]["feedback"] == "1 invalid action(s); page errors: 404 GET /nope"
    assert "reward halved" in info["score"]["feedback"]


def test_empty_final_answer_on_an_action_task_scores_zero() -> None:
    info = _play("buy-tote-standard", [], final="")
    assert info["score"]["value"] == 0.0
    assert "orders: expected 4 item(s), found 3" in info["score"]["components"]["state"]["feedback"]


def test_every_shop_task_has_skills_and_a_split() -> None:
    tasks = shop_tasks()
    assert len(tasks) >= 25
    assert {task.split for task in tasks} == {"train", "dev", "test"}
    assert all(task.skills for task in tasks)
    assert len({task.instruction for task in tasks}) == len(tasks)
