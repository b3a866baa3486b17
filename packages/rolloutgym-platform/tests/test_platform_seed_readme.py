"""The rollout SDK README's two env files (only the import line changed: ``from rollout import`` ->
``from rolloutgym import``), pushed and run on the platform, give the same results as run locally: the same
score for every task, policy by policy. Both declare the slug ``refund-agent``, so the second push is a new
version of it and each run pins the version it ran."""

from __future__ import annotations

import pytest
import rolloutgym as rg
from rolloutgym import Client
from rolloutgym.runs import read_run

REFUND_AGENT = """
from rolloutgym import Environment, Task

env = Environment(
    slug="refund-agent",
    name="Refund Agent",
    template="workflow",
    description="Customer-support refund workflow",
    config={
        "tools": [
            {
                "name": "lookup_order",
                "kind": "lookup",
                "fixturePath": "orders.${args.order_id}",
            },
            {
                "name": "refund",
                "kind": "action",
                "appendTo": "refunds",
                "value": {
                    "order_id": "${args.order_id}",
                    "amount": "${args.amount}",
                },
            },
        ],
        "fixtures": {
            "orders": {
                "O-1": {"customer": "Alice", "amount": 100, "status": "shipped"},
            },
        },
        "initialMutableState": {"refunds": []},
    },
    tasks=[
        Task(
            instruction="Refund order O-1 for $100 for Alice",
            hidden_ground_truth={
                "refunds": [{"order_id": "O-1", "amount": 100.0}],
            },
        ),
    ],
)
"""

TEMPLATE_HELPERS = """
from rolloutgym import (
    Environment, Task,
    lookup_tool, action_tool, mock_tool,
    custom_tool, custom_config,
    workflow_config, code_editing_config,
    browser_page, browser_config,
    primitive, verifier_config,
)

env = Environment(
    slug="refund-agent",
    name="Refund Agent",
    template="workflow",
    config=workflow_config(
        tools=[
            lookup_tool("get_order", from_array="orders", match_field="id",
                        description="Read an order.", params_schema={"id": "string"}),
            action_tool("refund", state_array="refunds",
                        description="Issue a refund.",
                        params_schema={"order_id": "string", "amount": "number"}),
        ],
        fixtures={"orders": [{"id": "O-1", "customer": "Alice", "amount": 100}]},
        initial_mutable_state={"refunds": []},
    ),
    tasks=[
        Task(instruction="Refund order O-1 for $100",
             hidden_ground_truth={"refunds": [{"order_id": "O-1", "amount": 100}]}),
    ],
)

env.verifier = verifier_config(
    primitive("called_lookup", "tool_was_called", tool="get_order", weight=1),
    primitive("refunds_count", "state_match",
              expected={"refunds.length": 1}, weight=2),
    primitive("no_errors", "no_tool_errors", weight=1),
)
"""


TASKS_JSONL = (
    '{"instruction": "Refund order O-1 for $100", "hidden_ground_truth": {"refunds": [{"order_id": "O-1", '
    '"amount": 100}]}, "split": "dev"}\n'
    '{"instruction": "Alice asks about order O-1; issue no refund", "hidden_ground_truth": {"refunds": []}, '
    '"split": "dev"}\n'
)


def _compare(client: Client, path, policy: str, version: str, tmp_path, wait) -> list[list[float]]:
    """Run ``path`` locally and its pushed ``version`` remotely; the per-task scores, which must agree."""
    result = rg.run(str(path), policy=policy, num_rollouts=2, out=tmp_path / f"local-{path.stem}-{policy}.jsonl")
    run = wait(client, client.create_run(env_slug="refund-agent", model=policy, n=2)["runId"])
    assert run["state"] == "succeeded" and run["envVersion"] == version
    local = read_run(tmp_path / f"local-{path.stem}-{policy}.jsonl")
    remote = read_run(client.download_run(run["runId"], tmp_path / f"remote-{path.stem}-{policy}.jsonl"))

    def by_task(read) -> list[list[float]]:  # groups are written as they finish: compare them in task order
        groups = sorted(zip(read.task_indices, read.groups, strict=True), key=lambda pair: pair[0])
        return [[score.value for score in group.scores] for _, group in groups]

    assert by_task(remote) == by_task(local), (path.name, policy)
    assert run["passRate"] == result.summary.pass_rate
    return by_task(remote)


@pytest.mark.parametrize("platform_server", ["sqlite"], indirect=True)
def test_the_seed_readme_env_files_give_the_same_results_remotely(platform_server, tmp_path, wait) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "tasks.jsonl").write_text(TASKS_JSONL)
    files = {
        "refund_agent.py": REFUND_AGENT,
        "builders_refund_agent.py": TEMPLATE_HELPERS,
        # the README's "for larger task sets": push uploads tasks.jsonl, which the file names, with it
        "tasks/jsonl_refund_agent.py": TEMPLATE_HELPERS + '\nenv.tasks = Task.from_jsonl("tasks.jsonl")\n',
    }
    versions, results = [], {}
    with Client(platform_server.url, platform_server.keys["all"]) as client:
        for name, source in files.items():
            path = tmp_path / name
            path.write_text(source)
            pushed = client.push(path)
            assert pushed["slug"] == "refund-agent"
            versions.append(pushed["version"])
            for policy in ("oracle", "null"):
                results[name, policy] = _compare(client, path, policy, pushed["version"], tmp_path, wait)
    assert len(set(versions)) == 3  # the same slug, three versions; each run pinned its own
    assert results["refund_agent.py", "oracle"] == [[1.0, 1.0]] and results["refund_agent.py", "null"] == [[0.0, 0.0]]
    assert results["builders_refund_agent.py", "null"] == [[0.25, 0.25]]  # the helpers' weights: no_tool_errors
    assert results["tasks/jsonl_refund_agent.py", "oracle"] == [[1.0, 1.0], [0.25, 0.25]]  # its second task refunds
    # nothing, which the README's verifier (one refund expected) scores as only no_tool_errors
