"""Golden fixtures for the refund-v0 grader: right answers pass, near misses and exploits score 0
with feedback that names the difference; the world and tasks are deterministic data."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from rolloutgym.registry import get_registry
from rolloutgym_workflow.refund import refund_fingerprint, refund_tasks

ENV_ID = "workflow/refund-v0"

# Changing the world, the tasks or the grading must bump the env's version (TASKS.md #9).
FINGERPRINT_V0 = "ef66a364c2155a603e6950e0f5f857fe8110fc988234ac1160a0c9758041e5d8"


def task(task_id: str) -> Any:
    return next(item for item in refund_tasks() if item.id == task_id)


def episode(task_id: str, actions: list[dict[str, Any]], answer: str = "Done.") -> tuple[float, dict[str, Any]]:
    """Play tool calls (one per message), then a final answer; return the reward and final info."""
    environment = get_registry().make(ENV_ID, task=task_id)
    environment.reset(seed=0)
    for position, entry in enumerate(actions):
        calls = entry if isinstance(entry, list) else [entry]
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"c{position}-{index}", **call} for index, call in enumerate(calls)],
        }
        _, _, terminated, truncated, info = environment.step(message)
        assert not (terminated or truncated)
    _, reward, terminated, _, info = environment.step({"role": "assistant", "content": answer})
    assert terminated
    environment.close()
    return reward, info


def with_arguments(actions: list[dict[str, Any]], name: str, **changes: Any) -> list[dict[str, Any]]:
    changed = copy.deepcopy(actions)
    for action in changed:
        if action["name"] == name:
            action["arguments"].update(changes)
    return changed


def test_reference_solution_passes():
    item = task("full_refund-1")
    reward, info = episode(item.id, item.reference_actions, item.reference_answer)
    assert reward == 1.0 and info["passed"] is True
    assert info["score"]["feedback"] == "passed: all 3 checks passed"


def test_right_answer_in_an_unusual_form_passes():
    item = task("two_refunds-1")
    # Both refunds in one message and in the opposite order, plus an extra read-only lookup.
    writes = [action for action in item.reference_actions if action["name"] == "issue_refund"]
    reads = [action for action in item.reference_actions if action["name"] != "issue_refund"]
    reads.append({"name": "list_customer_orders", "arguments": {"customer_id": reads[1]["arguments"]["customer_id"]}})
    reordered = reads + [list(reversed(writes))]
    reward, info = episode(item.id, reordered, "All set!")
    assert reward == 1.0, info["score"]["feedback"]


def test_wrong_amount_fails_and_names_the_difference():
    item = task("full_refund-1")
    reward, info = episode(item.id, with_arguments(item.reference_actions, "issue_refund", amount=80.0))
    assert reward == 0.0
    assert "refunds[0].amount: expected 89.99, got 80.0" in info["score"]["feedback"]


def test_wrong_order_fails_and_names_the_missing_refund():
    item = task("full_refund-1")
    reward, info = episode(item.id, with_arguments(item.reference_actions, "issue_refund", order_id="O-5002"))
    feedback = info["score"]["feedback"]
    assert reward == 0.0
    assert (
        'refunds: missing refund for order_id "O-5001"' in feedback
        and 'unexpected refund for order_id "O-5002"' in feedback
    )


def test_extra_write_fails():
    item = task("item_refund-1")
    extra = item.reference_actions + [
        {"name": "cancel_order", "arguments": {"order_id": item.reference_actions[-1]["arguments"]["order_id"]}}
    ]
    reward, info = episode(item.id, extra)
    assert reward == 0.0 and "cancellations: unexpected cancellation" in info["score"]["feedback"]


def test_refusal_task_needs_no_write_but_a_final_answer():
    item = task("refuse_outside_window-1")
    assert [action["name"] for action in item.reference_actions] == [
        "find_customer_by_email",
        "verify_identity",
        "get_order",
    ]
    reward, _ = episode(item.id, item.reference_actions, "Sorry, that order is outside the 30-day window.")
    assert reward == 1.0
    refunded = item.reference_actions + [
        {
            "name": "issue_refund",
            "arguments": {"order_id": item.reference_actions[-1]["arguments"]["order_id"], "amount": 10},
        }
    ]
    reward, info = episode(item.id, refunded)
    assert reward == 0.0 and "refunds: unexpected refund" in info["score"]["feedback"]
    reward, info = episode(item.id, item.reference_actions, "")
    assert reward == 0.0 and "[answered] the agent gave no final answer" in info["score"]["feedback"]


def test_no_action_scores_zero_everywhere():
    for item in refund_tasks():
        reward, info = episode(item.id, [], "")
        assert reward == 0.0, item.id
        assert info["score"]["feedback"].startswith("failed:")


def test_information_task_requires_the_answer():
    item = task("order_status-1")
    status = item.metadata["answer_terms"][0]
    assert episode(item.id, item.reference_actions, f"It is {status.upper()}.")[0] == 1.0
    reward, info = episode(item.id, item.reference_actions, "I checked your order.")
    assert reward == 0.0 and f"does not mention '{status}'" in info["score"]["feedback"]


def test_exploit_calling_every_tool_scores_zero():
    item = task("cancel-1")
    order_id = item.reference_actions[-1]["arguments"]["order_id"]
    customer_id = item.reference_actions[1]["arguments"]["customer_id"]
    email = item.reference_actions[1]["arguments"]["email"]
    everything = item.reference_actions + [
        {"name": "issue_refund", "arguments": {"order_id": order_id, "amount": 1}},
        {"name": "exchange_item", "arguments": {"order_id": order_id, "sku": "x", "new_sku": "y"}},
        {
            "name": "update_shipping_address",
            "arguments": {"order_id": order_id, "address": {"street": "s", "city": "c", "zip": "z"}},
        },
        {"name": "verify_identity", "arguments": {"customer_id": customer_id, "email": email}},
    ]
    reward, info = episode(item.id, everything, "Cancelled (and everything else).")
    assert reward == 0.0
    feedback = info["score"]["feedback"]
    for noun in ("refund", "exchange", "address_change"):
        assert f"unexpected {noun}" in feedback


def test_tasks_are_deterministic_versioned_data():
    tasks = refund_tasks()
    assert len(tasks) >= 40
    assert refund_fingerprint() == FINGERPRINT_V0, (
        "the refund world/tasks/grading changed: bump workflow/refund-v0 to -v1"
    )
    splits = Counter(item.split for item in tasks)
    assert set(splits) == {"train", "dev", "test"}
    assert len({item.id for item in tasks}) == len(tasks)
    assert all(item.metadata["skills"] and item.metadata["family"] for item in tasks)
    refusals = [item for item in tasks if item.metadata["family"].startswith("refuse_")]
    assert len(refusals) >= 8
    for item in refusals:
        writes = {key: value for key, value in item.hidden_ground_truth.items() if key != "verifications"}
        assert all(value == [] for value in writes.values()), item.id
    instructions = [item.instruction for item in tasks]
    assert len(set(instructions)) == len(instructions)

    # Every task touches its own orders: no test task shares an order with a train task.
    def orders(item: Any) -> set[str]:
        return {
            str(action["arguments"].get("order_id"))
            for action in item.reference_actions
            if "order_id" in action["arguments"]
        }

    train_orders = set().union(*(orders(item) for item in tasks if item.split == "train"))
    for item in tasks:
        if item.split == "test":
            assert not orders(item) & train_orders, item.id


@pytest.mark.parametrize("task_id", ["full_refund-2", "exchange-1", "cancel_and_move-1", "refuse_unknown_email-1"])
def test_feedback_is_json_and_names_components(task_id: str):
    item = task(task_id)
    reward, info = episode(task_id, item.reference_actions, item.reference_answer)
    assert reward == 1.0
    assert set(info["score"]["components"]) == {"state", "answered", "answer_terms"}
    json.dumps(info)
