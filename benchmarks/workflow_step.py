"""Tool-call throughput of workflow/refund-v0 against bare Python doing the same dictionary work.

    python benchmarks/workflow_step.py [--repeat 30]

Workload: every refund-v0 task's reference tool calls (lookups and writes), one call per
``env.step``, with a reset per task. The baseline runs the same calls through hand-written
functions: type checks with ``isinstance``, the dict lookup or list append, and
``json.dumps`` of the result (the env must hand the model text, so both sides encode).
A second baseline drops the JSON encoding, for reference. Target: env / bare <= 3x.
Also printed: the cost of ``reset()`` (a fresh copy of the mutable state and the prompt)
and of making an env for a task.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from rolloutgym.registry import get_registry
from rolloutgym_workflow.refund import refund_environment, refund_tasks


def bare_tools(fixtures: dict[str, Any], *, encode: bool) -> dict[str, Callable[[dict[str, Any], dict[str, Any]], Any]]:
    customers = {customer["email"]: customer for customer in fixtures["customers"]}
    catalog = {product["product_id"]: product for product in fixtures["catalog"]}
    owned = {entry["customer_id"]: entry for entry in fixtures["customer_orders"]}
    orders = fixtures["orders"]
    out = json.dumps if encode else (lambda value: value)

    def need(arguments: dict[str, Any], **types: type) -> None:
        for name, kind in types.items():
            if not isinstance(arguments.get(name), kind):
                raise ValueError(name)

    def find(table: dict[str, Any], key: str, arguments: dict[str, Any]) -> Any:
        need(arguments, **{key: str})
        found = table.get(arguments[key])
        return out(found if found is not None else {"error": "not found"})

    def append(name: str, types: dict[str, type]) -> Callable[[dict[str, Any], dict[str, Any]], Any]:
        def run(arguments: dict[str, Any], state: dict[str, Any]) -> Any:
            need(arguments, **types)
            value = dict(arguments)
            state[name].append(value)
            return out({"ok": True, **value})

        return run

    return {
        "find_customer_by_email": lambda arguments, state: find(customers, "email", arguments),
        "get_order": lambda arguments, state: find(orders, "order_id", arguments),
        "get_product": lambda arguments, state: find(catalog, "product_id", arguments),
        "list_customer_orders": lambda arguments, state: find(owned, "customer_id", arguments),
        "verify_identity": append("verifications", {"customer_id": str, "email": str}),
        "issue_refund": append("refunds", {"order_id": str, "amount": (int, float)}),  # type: ignore[dict-item]
        "cancel_order": append("cancellations", {"order_id": str}),
        "exchange_item": append("exchanges", {"order_id": str, "sku": str, "new_sku": str}),
        "update_shipping_address": append("address_changes", {"order_id": str, "address": dict}),
    }


def best(measure: Callable[[], float], repeat: int) -> float:
    return min(measure() for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    arguments = parser.parse_args()
    registry = get_registry()
    tasks = refund_tasks()
    environments = [registry.make("workflow/refund-v0", task=task.id) for task in tasks]
    scripts = [
        [
            {"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", **action}]}
            for i, action in enumerate(task.reference_actions)
        ]
        for task in tasks
    ]
    calls = sum(len(script) for script in scripts)
    config = refund_environment().config or {}
    initial = json.dumps(config["initialMutableState"])

    def env_run() -> float:
        start = time.perf_counter()
        for environment, script in zip(environments, scripts, strict=True):
            environment.reset()
            for message in script:
                environment.step(message)
        return time.perf_counter() - start

    def bare_run(tools: dict[str, Any]) -> Callable[[], float]:
        plan = [[(tools[action["name"]], action["arguments"]) for action in task.reference_actions] for task in tasks]

        def run() -> float:
            start = time.perf_counter()
            for steps in plan:
                state = json.loads(initial)
                for function, call_arguments in steps:
                    function(call_arguments, state)
            return time.perf_counter() - start

        return run

    env_seconds = best(env_run, arguments.repeat)
    bare_json = best(bare_run(bare_tools(config["fixtures"], encode=True)), arguments.repeat)
    bare_plain = best(bare_run(bare_tools(config["fixtures"], encode=False)), arguments.repeat)

    def reset_cost() -> float:
        environment = environments[0]
        start = time.perf_counter()
        for _ in range(1000):
            environment.reset()
        return (time.perf_counter() - start) / 1000

    def make_cost() -> float:
        start = time.perf_counter()
        for task in tasks:
            registry.make("workflow/refund-v0", task=task.id).reset()
        return (time.perf_counter() - start) / len(tasks)

    reset_seconds = best(reset_cost, 5)
    make_seconds = statistics.median(make_cost() for _ in range(5))
    print(f"workload: {len(tasks)} tasks, {calls} tool calls per pass, best of {arguments.repeat}")
    print(f"refund-v0 env.step      : {calls / env_seconds:>10,.0f} tool calls/s")
    print(f"bare Python + json.dumps: {calls / bare_json:>10,.0f} tool calls/s")
    print(f"bare Python, no JSON    : {calls / bare_plain:>10,.0f} tool calls/s")
    print(f"overhead vs bare + JSON : {env_seconds / bare_json:.2f}x (target <= 3x)")
    print(f"overhead vs bare no JSON: {env_seconds / bare_plain:.2f}x (for reference)")
    print(f"reset()                 : {reset_seconds * 1e6:.1f} us")
    print(f"make + reset per task   : {make_seconds * 1e6:.1f} us")


if __name__ == "__main__":
    main()
