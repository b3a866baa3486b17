"""``workflow/refund-v0``: retail customer support with written policy rules.

The environment is an ordinary declarative ``workflow`` :class:`Environment` (so it is also
an example of the template): read-only fixtures (customers, catalogue, orders), write tools
that append to the mutable state (``verifications``, ``refunds``, ``cancellations``,
``exchanges``, ``address_changes``), and the policy in the description. Every task's
``hidden_ground_truth`` is the mutable state after replaying its reference actions on a
fresh copy of the world; the verifier requires that state exactly and a final answer (plus
the answer terms of information tasks). Tasks that must be refused expect no write at all
beyond identity verification.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
from typing import Any

from rolloutgym.declarative import (
    Environment,
    Task,
    action_tool,
    lookup_tool,
    primitive,
    verifier_config,
    workflow_config,
)

from ._data_files import refund_task_records, refund_world

__all__ = [
    "ORDER_STATUSES",
    "POLICY",
    "TODAY",
    "WINDOW_START",
    "make_refund_env",
    "make_refund_env_v1",
    "refund_environment",
    "refund_fingerprint",
    "refund_tasks",
    "refund_tasks_v1",
]

TODAY = datetime.date(2026, 3, 15)
WINDOW_START = TODAY - datetime.timedelta(days=30)  # 2026-02-13: refunds/exchanges on or after this delivery date

POLICY = f"""\
Retail support policy. Today is {TODAY.isoformat()}.
1. Authenticate first. Find the customer by the email they give (find_customer_by_email), then call
   verify_identity once with that customer's id and email, before looking at or changing any order.
   If no customer has that email, do not look at or change any order.
2. Only act on orders of the authenticated customer (an order's customer_id must match).
3. Refunds (issue_refund, one call per order): only for orders with status 'delivered' whose delivered_on
   is on or after {WINDOW_START.isoformat()} (30 days). The amount is what the customer asks for: the full
   remaining amount (total_paid minus refunded_amount) for a full refund, the item's quantity x unit_price for
   an item. Never refund more than total_paid minus refunded_amount; if asked for more, refund nothing.
4. Cancellations (cancel_order): only orders with status 'pending' or 'processing'.
5. Address changes (update_shipping_address): only orders with status 'pending' or 'processing'; pass the new
   address exactly as the customer gives it, as {{"street", "city", "zip"}}.
6. Exchanges (exchange_item): only delivered orders inside the same 30-day window, for another variant of the
   same product (same product_id) that is in stock. Variants of a product cost the same.
7. If a request breaks a rule, do not call any write tool for it, and tell the customer why.
8. Finish with a short final answer to the customer (a message without tool calls)."""

_STATE: dict[str, list[Any]] = {
    "verifications": [],
    "refunds": [],
    "cancellations": [],
    "exchanges": [],
    "address_changes": [],
}

_ADDRESS = {
    "type": "object",
    "properties": {"street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string"}},
    "required": ["street", "city", "zip"],
    "additionalProperties": False,
}


def _tools() -> list[dict[str, Any]]:
    return [
        lookup_tool(
            "find_customer_by_email",
            from_array="customers",
            match_field="email",
            description="Find a customer by email address.",
            params_schema={"email": "string"},
        ),
        {
            "kind": "lookup",
            "name": "get_order",
            "description": "Read an order: status, dates, items, total_paid, refunded_amount, shipping address.",
            "fixturePath": "orders.${args.order_id}",
            "paramsSchema": {"order_id": "string"},
        },
        lookup_tool(
            "list_customer_orders",
            from_array="customer_orders",
            match_field="customer_id",
            description="List the order ids of a customer.",
            params_schema={"customer_id": "string"},
        ),
        lookup_tool(
            "get_product",
            from_array="catalog",
            match_field="product_id",
            description="Read a product and its variants (sku, options, in_stock).",
            params_schema={"product_id": "string"},
        ),
        {
            "kind": "action",
            "name": "verify_identity",
            "description": "Record that the customer was authenticated (customer id and the email they gave).",
            "appendTo": "verifications",
            "value": {"customer_id": "${args.customer_id}", "email": "${args.email}"},
            "paramsSchema": {"customer_id": "string", "email": "string"},
        },
        {
            "kind": "action",
            "name": "issue_refund",
            "description": "Refund an amount (in dollars) on an order.",
            "appendTo": "refunds",
            "value": {"order_id": "${args.order_id}", "amount": "${args.amount}"},
            "paramsSchema": {"order_id": "string", "amount": "number"},
        },
        action_tool(
            "cancel_order",
            state_array="cancellations",
            description="Cancel an order that has not shipped.",
            params_schema={"order_id": "string"},
        ),
        action_tool(
            "exchange_item",
            state_array="exchanges",
            description="Exchange the item with sku for the variant new_sku of the same product.",
            params_schema={"order_id": "string", "sku": "string", "new_sku": "string"},
        ),
        {
            "kind": "action",
            "name": "update_shipping_address",
            "description": "Change the shipping address of an order that has not shipped.",
            "appendTo": "address_changes",
            "value": {"order_id": "${args.order_id}", "address": "${args.address}"},
            "paramsSchema": {"order_id": "string", "address": _ADDRESS},
        },
    ]


# Every order status a reply could name, with the words that give the same answer. From v1,
# a status question's answer must give its status and none of the others (TASKS.md rule 7):
# naming every status, or two of them, scores 0.
ORDER_STATUSES = {
    "pending": ["pending"],
    "processing": ["processing"],
    "shipped": ["shipped", "in transit", "dispatched"],
    "delivered": ["delivered"],
    "cancelled": ["cancelled", "canceled"],
    "returned": ["returned"],
    "refunded": ["refunded"],
}


def _verifier(version: int) -> dict[str, Any]:
    terms: dict[str, Any] = {"terms_from_task": "answer_terms", "case_sensitive": False}
    if version >= 1:
        terms["competing_terms_from_task"] = "competing_terms"
    return verifier_config(
        primitive("state", "ground_truth_match", tolerance=0.005, weight=3),
        primitive("answered", "final_answer", weight=1),
        primitive("answer_terms", "contains_terms", weight=1, **terms),
        *([primitive("looked_up", "calls_from_task", weight=1)] if version >= 2 else []),
        scoring="binary",
    )


def _competing_statuses(answer_terms: list[str]) -> list[str]:
    given = {status for status, words in ORDER_STATUSES.items() if any(term in words for term in answer_terms)}
    return [word for status, words in ORDER_STATUSES.items() if status not in given for word in words]


@functools.cache
def refund_environment(version: int = 0) -> Environment:
    """The environment with all tasks and their replayed ground truth (built once per process).

    ``version`` 0 is ``workflow/refund-v0`` as first published (kept so its runs stay
    comparable); 1 adds the competing statuses to status questions, so hedges score 0; 2 also
    requires, for tasks whose right end state is the untouched world (the unknown-email
    refusals), the reference lookups (``calls_from_task``): under v1 a reply with no tool call
    passed them, so ``--policy random`` scored about 4%.
    """
    environment = Environment(
        slug="refund",
        name="Retail Support",
        template="workflow",
        description=POLICY,
        config=workflow_config(
            tools=_tools(), fixtures=refund_world("refund"), initial_mutable_state=json.loads(json.dumps(_STATE))
        ),
        verifier=_verifier(version),
    )
    from .template import compile_program

    program = compile_program(environment)
    tasks = []
    for record in refund_task_records("refund"):
        task = Task(
            instruction=record.instruction,
            split=record.split,
            id=record.id,
            reference_actions=record.reference_actions,
            reference_answer=record.reference_answer,
            metadata=record.metadata.model_dump(),
        )
        if version >= 1 and record.metadata.answer_terms:
            task.metadata["competing_terms"] = _competing_statuses(record.metadata.answer_terms)
        task.hidden_ground_truth = _replay(program, task)
        if version >= 2 and task.hidden_ground_truth == _STATE:
            # Nothing to do is right (an unknown email): the refusal must rest on the lookup, or a bare reply passes.
            task.metadata["required_calls"] = [dict(action) for action in task.reference_actions]
        tasks.append(task)
    environment.tasks = tasks
    return environment


def _replay(program: Any, task: Task) -> dict[str, Any]:
    """The mutable state after the reference actions, on a fresh copy of the world."""
    from .envs import WorkflowEnv

    environment = WorkflowEnv(program, task, max_tool_calls=100)
    environment.reset()
    for entry in task.reference_actions:
        observations, _, _, _, info = environment.step(
            {"role": "assistant", "content": "", "tool_calls": [{"id": "ref", **entry}]}
        )
        if info["invalid_actions"]:  # a lookup may rightly find nothing; a malformed call is a bug
            raise RuntimeError(
                f"refund-v0 task {task.id}: reference action {entry} is invalid: {observations[0]['content']}"
            )
    state = json.loads(json.dumps(environment.state))
    environment.close()
    return state


def refund_tasks(version: int = 0) -> list[Task]:
    """The tasks of ``workflow/refund-v0`` (ids like ``full_refund-1``; splits in the data)."""
    return list(refund_environment(version).tasks)


def refund_tasks_v1() -> list[Task]:
    """The tasks of ``workflow/refund-v1`` (v0's tasks; status questions list competing statuses)."""
    return refund_tasks(1)


def refund_fingerprint(version: int = 0) -> str:
    """sha256 of the environment payload: changes only with a new version of the env."""
    payload = json.dumps(refund_environment(version).to_payload(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


@functools.cache
def _program(version: int = 0) -> Any:
    from .template import compile_program

    return compile_program(refund_environment(version))


def make_refund_env(task: Task | None = None, *, version: int = 0, **kwargs: Any) -> Any:
    """The env factory of ``workflow/refund-v0`` (``max_tool_calls`` defaults to 20)."""
    from .envs import WorkflowEnv

    return WorkflowEnv(_program(version), task if task is not None else refund_tasks(version)[0], **kwargs)


def make_refund_env_v1(task: Task | None = None, **kwargs: Any) -> Any:
    """The env factory of ``workflow/refund-v1``."""
    return make_refund_env(task, version=1, **kwargs)


def refund_tasks_v2() -> list[Task]:
    """The tasks of ``workflow/refund-v2`` (v1's; the unknown-email refusals list their required lookup)."""
    return refund_tasks(2)


def make_refund_env_v2(task: Task | None = None, **kwargs: Any) -> Any:
    """The env factory of ``workflow/refund-v2``."""
    return make_refund_env(task, version=2, **kwargs)
