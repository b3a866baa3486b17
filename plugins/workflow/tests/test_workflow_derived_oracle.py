"""The oracle of SDK env files ported by changing only the import line (tasks with
``hidden_ground_truth`` and no ``reference_actions``): calls derived from the expected state."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import rolloutgym as rg

README_EXAMPLE = """
from rolloutgym import Environment, Task

env = Environment(
    slug="refund-agent",
    name="Refund Agent",
    template="workflow",
    description="Customer-support refund workflow",
    config={
        "tools": [
            {"name": "lookup_order", "kind": "lookup", "fixturePath": "orders.${args.order_id}"},
            {"name": "refund", "kind": "action", "appendTo": "refunds",
             "value": {"order_id": "${args.order_id}", "amount": "${args.amount}"}},
        ],
        "fixtures": {"orders": {"O-1": {"customer": "Alice", "amount": 100, "status": "shipped"}}},
        "initialMutableState": {"refunds": []},
    },
    tasks=[Task(instruction="Refund order O-1 for $100 for Alice",
                hidden_ground_truth={"refunds": [{"order_id": "O-1", "amount": 100.0}]})],
)
"""

HELPERS_EXAMPLE = """
from rolloutgym import Environment, Task, action_tool, lookup_tool, primitive, verifier_config, workflow_config

env = Environment(
    slug="refund-agent",
    name="Refund Agent",
    template="workflow",
    config=workflow_config(
        tools=[
            lookup_tool("get_order", from_array="orders", match_field="id",
                        description="Read an order.", params_schema={"id": "string"}),
            action_tool("refund", state_array="refunds",
                        description="Issue a refund.", params_schema={"order_id": "string", "amount": "number"}),
        ],
        fixtures={"orders": [{"id": "O-1", "customer": "Alice", "amount": 100}]},
        initial_mutable_state={"refunds": []},
    ),
    tasks=[Task(instruction="Refund order O-1 for $100",
                hidden_ground_truth={"refunds": [{"order_id": "O-1", "amount": 100}]})],
)
env.verifier = verifier_config(
    primitive("called_lookup", "tool_was_called", tool="get_order", weight=1),
    primitive("refunds_count", "state_match", expected={"refunds.length": 1}, weight=2),
    primitive("no_errors", "no_tool_errors", weight=1),
)
"""

UNDERIVABLE = """
from rolloutgym import Environment, Task

env = Environment(
    slug="notes",
    name="Notes",
    template="workflow",
    config={
        "tools": [{"name": "note", "kind": "action", "appendTo": "notes",
                   "value": {"text": "refund of ${args.amount} dollars"}}],
        "initialMutableState": {"notes": []},
    },
    tasks=[Task(instruction="Note a refund of 5 dollars",
                hidden_ground_truth={"notes": [{"text": "refund of 5 dollars"}]})],
)
"""


def _run(tmp_path: Path, source: str, policy: str) -> float:
    path = tmp_path / "env.py"
    path.write_text(source)
    result = rg.run(str(path), policy=policy, out=str(tmp_path / f"{policy}.jsonl"))
    return result.summary.pass_rate


@pytest.mark.parametrize("source", [README_EXAMPLE, HELPERS_EXAMPLE], ids=["readme", "template-helpers"])
def test_ported_sdk_examples_get_an_oracle_that_solves_them(tmp_path: Path, source: str) -> None:
    assert _run(tmp_path, source, "oracle") == 1.0
    assert _run(tmp_path, source, "null") == 0.0
    group = json.loads((tmp_path / "oracle.jsonl").read_text().splitlines()[-1])
    names = [
        call["name"] for step in group["trajectories"][0]["steps"] for call in (step["action"].get("tool_calls") or [])
    ]
    assert names[0] in ("lookup_order", "get_order") and names[-1] == "refund"  # reads the order, then refunds


def test_a_task_whose_state_cannot_be_derived_says_so_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert _run(tmp_path, UNDERIVABLE, "oracle") == 0.0
    warnings = [record.getMessage() for record in caplog.records if "no reference solution" in record.getMessage()]
    assert len(warnings) == 1 and "reference_actions" in warnings[0]
