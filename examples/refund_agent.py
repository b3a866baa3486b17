"""The rollout SDK README's refund example, run locally by rolloutgym.

Ported from the SDK by changing only the import line, plus rolloutgym's optional
``reference_actions`` on the task so that ``--policy oracle`` can replay the reference
solution (the raw ``fixturePath`` / ``appendTo`` + ``value`` tool shapes are executed, which
the SDK's own local engine cannot do)::

    rolloutgym run examples/refund_agent.py --policy oracle
    rolloutgym run examples/refund_agent.py --policy null      # scores 0
"""

from rolloutgym.declarative import Environment, Task

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
            reference_actions=[
                {"name": "lookup_order", "arguments": {"order_id": "O-1"}},
                {"name": "refund", "arguments": {"order_id": "O-1", "amount": 100}},
            ],
            reference_answer="Refunded $100 for order O-1.",
        ),
    ],
)
