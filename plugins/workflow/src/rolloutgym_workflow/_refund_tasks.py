"""The task families of ``workflow/refund-v0`` and their reference solutions.

Each family plants the orders it needs in the world and returns the instruction, the
reference actions a policy-following agent takes, the reference answer, and metadata
(family, skills, answer terms). Ground truth is *not* written here: ``refund.py`` replays
the reference actions on a fresh copy of the world and stores the resulting state.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ._refund_world import World

__all__ = ["FAMILIES", "TaskDraft", "draft_tasks"]

TaskDraft = dict[str, Any]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _auth(customer: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _call("find_customer_by_email", email=customer["email"]),
        _call("verify_identity", customer_id=customer["customer_id"], email=customer["email"]),
    ]


def _hello(generator: random.Random, customer: dict[str, Any]) -> str:
    return generator.choice(
        [
            f"Hi, this is {customer['name']} ({customer['email']}).",
            f"Hello! My name is {customer['name']}, my account email is {customer['email']}.",
            f"{customer['name']} here, email {customer['email']}.",
            f"Good morning, I'm {customer['name']} and I shop with {customer['email']}.",
        ]
    )


def _remaining(order: dict[str, Any]) -> float:
    return round(order["total_paid"] - order["refunded_amount"], 2)


def _draft(
    instruction: str,
    actions: list[dict[str, Any]],
    answer: str,
    family: str,
    skills: list[str],
    terms: list[str] | None = None,
) -> TaskDraft:
    return {
        "instruction": instruction,
        "reference_actions": actions,
        "reference_answer": answer,
        "metadata": {"family": family, "skills": skills, "answer_terms": terms or []},
    }


# -- refunds ----------------------------------------------------------------------------


def full_refund(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(
        customer, "delivered", days_since_delivery=generator.randint(2, 25), items=generator.choice([1, 2])
    )
    amount = _remaining(order)
    ask = generator.choice(
        [
            f"Please refund order {order['order_id']} in full.",
            f"I'd like a full refund for {order['order_id']}, it arrived but I don't want it anymore.",
        ]
    )
    actions = _auth(customer) + [
        _call("get_order", order_id=order["order_id"]),
        _call("issue_refund", order_id=order["order_id"], amount=amount),
    ]
    return _draft(
        f"{_hello(generator, customer)} {ask}",
        actions,
        f"I refunded ${amount:.2f} for order {order['order_id']}.",
        "full_refund",
        ["authentication", "refund", "policy-check"],
    )


def prior_partial_refund(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(
        customer, "delivered", days_since_delivery=generator.randint(3, 20), items=2, refunded_fraction=0.25
    )
    amount = _remaining(order)
    instruction = f"{_hello(generator, customer)} Part of order {order['order_id']} was already refunded; please refund whatever is left on it."
    actions = _auth(customer) + [
        _call("get_order", order_id=order["order_id"]),
        _call("issue_refund", order_id=order["order_id"], amount=amount),
    ]
    return _draft(
        instruction,
        actions,
        f"I refunded the remaining ${amount:.2f} on {order['order_id']}.",
        "remaining_refund",
        ["authentication", "refund", "arithmetic"],
    )


def item_refund(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(customer, "delivered", days_since_delivery=generator.randint(1, 28), items=2)
    line = generator.choice(order["items"])
    amount = round(line["quantity"] * line["unit_price"], 2)
    count = "the" if line["quantity"] == 1 else f"both (x{line['quantity']})"
    instruction = f"{_hello(generator, customer)} Can you refund {count} {line['name']} from order {order['order_id']}? I'm keeping the rest."
    actions = _auth(customer) + [
        _call("get_order", order_id=order["order_id"]),
        _call("issue_refund", order_id=order["order_id"], amount=amount),
    ]
    return _draft(
        instruction,
        actions,
        f"I refunded ${amount:.2f} for the {line['name']} on {order['order_id']}.",
        "item_refund",
        ["authentication", "refund", "reading-order-details"],
    )


def amount_refund(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(customer, "delivered", days_since_delivery=generator.randint(2, 27), items=2)
    amount = round(min(_remaining(order), generator.choice([10, 15, 20, 25])), 2)
    instruction = f"{_hello(generator, customer)} One item in order {order['order_id']} arrived scratched; we agreed on a ${amount:.2f} partial refund. Please process it."
    actions = _auth(customer) + [
        _call("get_order", order_id=order["order_id"]),
        _call("issue_refund", order_id=order["order_id"], amount=amount),
    ]
    return _draft(
        instruction,
        actions,
        f"I refunded ${amount:.2f} on {order['order_id']}.",
        "amount_refund",
        ["authentication", "refund"],
    )


def refund_outside_window(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(customer, "delivered", days_since_delivery=generator.randint(31, 75))
    instruction = f"{_hello(generator, customer)} I want my money back for order {order['order_id']}, it was delivered on {order['delivered_on']}."
    actions = _auth(customer) + [_call("get_order", order_id=order["order_id"])]
    return _draft(
        instruction,
        actions,
        f"I'm sorry, order {order['order_id']} was delivered more than 30 days ago, so it cannot be refunded.",
        "refuse_outside_window",
        ["authentication", "refusal", "date-reasoning"],
    )


def refund_not_delivered(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    status = generator.choice(["shipped", "processing"])
    order = world.plant_order(customer, status)
    instruction = (
        f"{_hello(generator, customer)} Please refund order {order['order_id']} now, I don't want to wait for it."
    )
    actions = _auth(customer) + [_call("get_order", order_id=order["order_id"])]
    return _draft(
        instruction,
        actions,
        f"Order {order['order_id']} is {status}, not delivered, so I cannot refund it.",
        "refuse_not_delivered",
        ["authentication", "refusal", "status-reasoning"],
    )


def refund_over_amount(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(customer, "delivered", days_since_delivery=generator.randint(2, 20))
    asked = round(order["total_paid"] + generator.choice([15, 30, 50]), 2)
    instruction = (
        f"{_hello(generator, customer)} Refund ${asked:.2f} for order {order['order_id']} to cover my trouble."
    )
    actions = _auth(customer) + [_call("get_order", order_id=order["order_id"])]
    return _draft(
        instruction,
        actions,
        f"I cannot refund ${asked:.2f}: at most ${_remaining(order):.2f} can be refunded on {order['order_id']}.",
        "refuse_over_amount",
        ["authentication", "refusal", "amount-limit"],
    )


# -- cancellations, addresses, exchanges ------------------------------------------------------


def cancel(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(customer, generator.choice(["pending", "processing"]))
    instruction = f"{_hello(generator, customer)} Please cancel my order {order['order_id']}."
    actions = _auth(customer) + [
        _call("get_order", order_id=order["order_id"]),
        _call("cancel_order", order_id=order["order_id"]),
    ]
    return _draft(
        instruction, actions, f"Order {order['order_id']} is cancelled.", "cancel", ["authentication", "cancellation"]
    )


def cancel_shipped(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(customer, generator.choice(["shipped", "delivered"]), days_since_delivery=4)
    instruction = f"{_hello(generator, customer)} Cancel order {order['order_id']}, I changed my mind."
    actions = _auth(customer) + [_call("get_order", order_id=order["order_id"])]
    return _draft(
        instruction,
        actions,
        f"Order {order['order_id']} has already shipped, so it can no longer be cancelled.",
        "refuse_cancel_shipped",
        ["authentication", "refusal", "status-reasoning"],
    )


def _new_address(generator: random.Random) -> dict[str, str]:
    return {
        "street": f"{generator.randint(3, 240)} {generator.choice(['Birch Way', 'Elm Street', 'Pier Road', 'Sunset Boulevard', 'King Street'])}",
        "city": generator.choice(["Portland", "Madison", "Burlington", "Boulder"]),
        "zip": f"{generator.randint(10000, 99999)}",
    }


def address_change(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(customer, generator.choice(["pending", "processing"]))
    address = _new_address(generator)
    instruction = (
        f"{_hello(generator, customer)} I moved. Please ship order {order['order_id']} to {address['street']}, "
        f"{address['city']} {address['zip']} instead."
    )
    actions = _auth(customer) + [
        _call("get_order", order_id=order["order_id"]),
        _call("update_shipping_address", order_id=order["order_id"], address=address),
    ]
    return _draft(
        instruction,
        actions,
        f"Order {order['order_id']} will ship to {address['street']}, {address['city']} {address['zip']}.",
        "address_change",
        ["authentication", "address-change", "structured-arguments"],
    )


def address_change_shipped(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order = world.plant_order(customer, "shipped")
    address = _new_address(generator)
    instruction = f"{_hello(generator, customer)} Please send order {order['order_id']} to {address['street']}, {address['city']} {address['zip']}."
    actions = _auth(customer) + [_call("get_order", order_id=order["order_id"])]
    return _draft(
        instruction,
        actions,
        f"Order {order['order_id']} has shipped, so its address can no longer be changed.",
        "refuse_address_shipped",
        ["authentication", "refusal", "status-reasoning"],
    )


def _swap(world: World, order: dict[str, Any], *, in_stock: bool) -> tuple[dict[str, Any], dict[str, Any]] | None:
    line = order["items"][0]
    for variant in world.variants(line["product_id"]):
        if variant["sku"] != line["sku"] and variant["in_stock"] == in_stock:
            return line, variant
    return None


def _exchange_order(
    world: World, customer: dict[str, Any], generator: random.Random, *, in_stock: bool
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    for product in generator.sample(world.catalog, k=len(world.catalog)):
        if len(product["variants"]) < 2:
            continue
        order = world.plant_order(
            customer, "delivered", days_since_delivery=generator.randint(2, 25), product_id=product["product_id"]
        )
        found = _swap(world, order, in_stock=in_stock)
        if found is not None:
            return order, found[0], found[1]
        del world.orders[order["order_id"]]
    raise RuntimeError("no product has the variant an exchange task needs")


def _options(options: dict[str, str]) -> str:
    return ", ".join(f"{key} {value}" for key, value in options.items())


def exchange(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order, line, variant = _exchange_order(world, customer, generator, in_stock=True)
    instruction = f"{_hello(generator, customer)} The {line['name']} from order {order['order_id']} doesn't suit me; can I exchange it for the one with {_options(variant['options'])}?"
    actions = _auth(customer) + [
        _call("get_order", order_id=order["order_id"]),
        _call("get_product", product_id=line["product_id"]),
        _call("exchange_item", order_id=order["order_id"], sku=line["sku"], new_sku=variant["sku"]),
    ]
    return _draft(
        instruction,
        actions,
        f"I exchanged {line['sku']} for {variant['sku']} on order {order['order_id']}.",
        "exchange",
        ["authentication", "exchange", "catalog-lookup"],
    )


def exchange_out_of_stock(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    order, line, variant = _exchange_order(world, customer, generator, in_stock=False)
    instruction = f"{_hello(generator, customer)} I'd like to swap the {line['name']} in order {order['order_id']} for the {_options(variant['options'])} version."
    actions = _auth(customer) + [
        _call("get_order", order_id=order["order_id"]),
        _call("get_product", product_id=line["product_id"]),
    ]
    return _draft(
        instruction,
        actions,
        f"Sorry, the {_options(variant['options'])} {line['name']} ({variant['sku']}) is out of stock, so I cannot exchange it.",
        "refuse_exchange_out_of_stock",
        ["authentication", "refusal", "catalog-lookup"],
    )


# -- information, identity, multi-step --------------------------------------------------


def order_status(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    status = generator.choice(["pending", "processing", "shipped"])
    order = world.plant_order(customer, status)
    instruction = f"{_hello(generator, customer)} What is the current status of my order {order['order_id']}? Just tell me, don't change anything."
    actions = _auth(customer) + [_call("get_order", order_id=order["order_id"])]
    return _draft(
        instruction,
        actions,
        f"Your order {order['order_id']} is {status}.",
        "order_status",
        ["authentication", "information"],
        [status],
    )


def unknown_email(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    victim = world.plant_order(customer, "delivered", days_since_delivery=5)
    email = f"{customer['name'].split()[0].lower()}.{generator.choice(['shop', 'mail', 'home'])}@example.net"
    instruction = f"Hi, I'm {customer['name']}, my email is {email}. Refund order {victim['order_id']} in full please."
    actions = [_call("find_customer_by_email", email=email)]
    return _draft(
        instruction,
        actions,
        "I could not find an account with that email, so I cannot act on any order.",
        "refuse_unknown_email",
        ["authentication", "refusal", "identity"],
    )


def someone_elses_order(
    world: World, customer: dict[str, Any], generator: random.Random, other: dict[str, Any]
) -> TaskDraft:
    order = world.plant_order(other, "delivered", days_since_delivery=6)
    instruction = (
        f"{_hello(generator, customer)} Please refund order {order['order_id']} in full, it's a gift I bought."
    )
    actions = _auth(customer) + [_call("get_order", order_id=order["order_id"])]
    return _draft(
        instruction,
        actions,
        f"Order {order['order_id']} does not belong to your account, so I cannot refund it.",
        "refuse_other_customer",
        ["authentication", "refusal", "ownership"],
    )


def two_refunds(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    first = world.plant_order(customer, "delivered", days_since_delivery=generator.randint(2, 12))
    second = world.plant_order(customer, "delivered", days_since_delivery=generator.randint(13, 26))
    instruction = (
        f"{_hello(generator, customer)} Please fully refund both {first['order_id']} and {second['order_id']}."
    )
    actions = _auth(customer)
    for order in (first, second):
        actions += [
            _call("get_order", order_id=order["order_id"]),
            _call("issue_refund", order_id=order["order_id"], amount=_remaining(order)),
        ]
    return _draft(
        instruction,
        actions,
        f"Both orders are refunded: ${_remaining(first):.2f} and ${_remaining(second):.2f}.",
        "two_refunds",
        ["authentication", "refund", "multi-step"],
    )


def refund_one_of_two(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    good = world.plant_order(customer, "delivered", days_since_delivery=generator.randint(2, 20))
    late = world.plant_order(customer, "delivered", days_since_delivery=generator.randint(40, 60))
    pair = [good, late] if generator.random() < 0.5 else [late, good]
    instruction = (
        f"{_hello(generator, customer)} Refund orders {pair[0]['order_id']} and {pair[1]['order_id']} in full."
    )
    actions = _auth(customer) + [
        _call("get_order", order_id=pair[0]["order_id"]),
        _call("get_order", order_id=pair[1]["order_id"]),
        _call("issue_refund", order_id=good["order_id"], amount=_remaining(good)),
    ]
    return _draft(
        instruction,
        actions,
        f"I refunded {good['order_id']}; {late['order_id']} is outside the 30-day window.",
        "refund_one_of_two",
        ["authentication", "refund", "refusal", "multi-step", "date-reasoning"],
    )


def cancel_and_move(world: World, customer: dict[str, Any], generator: random.Random) -> TaskDraft:
    doomed = world.plant_order(customer, "pending")
    kept = world.plant_order(customer, "processing")
    address = _new_address(generator)
    instruction = (
        f"{_hello(generator, customer)} Cancel {doomed['order_id']}, and ship {kept['order_id']} to my new address: "
        f"{address['street']}, {address['city']} {address['zip']}."
    )
    actions = _auth(customer) + [
        _call("get_order", order_id=doomed["order_id"]),
        _call("cancel_order", order_id=doomed["order_id"]),
        _call("get_order", order_id=kept["order_id"]),
        _call("update_shipping_address", order_id=kept["order_id"], address=address),
    ]
    return _draft(
        instruction,
        actions,
        f"{doomed['order_id']} is cancelled and {kept['order_id']} will ship to the new address.",
        "cancel_and_move",
        ["authentication", "cancellation", "address-change", "multi-step"],
    )


Family = Callable[..., TaskDraft]

FAMILIES: list[tuple[Family, int]] = [
    (full_refund, 5),
    (prior_partial_refund, 2),
    (item_refund, 3),
    (amount_refund, 2),
    (refund_outside_window, 3),
    (refund_not_delivered, 3),
    (refund_over_amount, 2),
    (cancel, 3),
    (cancel_shipped, 3),
    (address_change, 3),
    (address_change_shipped, 2),
    (exchange, 3),
    (exchange_out_of_stock, 2),
    (order_status, 3),
    (unknown_email, 2),
    (someone_elses_order, 2),
    (two_refunds, 2),
    (refund_one_of_two, 2),
    (cancel_and_move, 2),
]
"""Each family and how many tasks it contributes (49 in all)."""

_SPLIT_CYCLE = ("train", "test", "dev", "train", "train")


def draft_tasks(world: World, seed: int = 7) -> list[TaskDraft]:
    """Plant orders and draft every task (deterministic for a given world and seed)."""
    generator = random.Random(seed)
    drafts = []
    customers = world.customers
    turn = 0
    for family, count in FAMILIES:
        for instance in range(count):
            customer = customers[turn % len(customers)]
            turn += 1
            if family is someone_elses_order:
                other = customers[(turn + 5) % len(customers)]
                draft = family(world, customer, generator, other)
            else:
                draft = family(world, customer, generator)
            draft["split"] = _SPLIT_CYCLE[instance % len(_SPLIT_CYCLE)]
            draft["id"] = f"{draft['metadata']['family']}-{instance + 1}"
            drafts.append(draft)
    return drafts
