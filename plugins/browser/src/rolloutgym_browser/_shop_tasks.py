"""The task definitions of ``browser/shop-v0``: instruction, reference actions, answer, split.

Expected end states are *not* written here: ``shop.build_tasks()`` replays each reference
solution on a fresh site and stores the resulting state in ``shop_tasks.json`` (the
ground truth the grader uses). Answers are computed from the catalog, never typed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._shop_catalog import CATEGORIES, PRODUCTS, SHIPPING, initial_shop_state, product
from ._shop_site import search_products

__all__ = ["TASK_DEFINITIONS", "TaskDefinition"]

Call = dict[str, Any]


@dataclass(frozen=True)
class TaskDefinition:
    id: str
    split: str
    instruction: str
    oracle: tuple[Call, ...]
    skills: tuple[str, ...]
    answer: Any = None
    setup: dict[str, Any] = field(default_factory=dict)
    start_url: str = "/"


def click(element_id: str) -> Call:
    return {"name": "click", "arguments": {"element_id": element_id}}


def type_text(element_id: str, text: str) -> Call:
    return {"name": "type", "arguments": {"element_id": element_id, "text": text}}


def select(element_id: str, option: str) -> Call:
    return {"name": "select", "arguments": {"element_id": element_id, "option": option}}


def check(element_id: str, checked: bool = True) -> Call:
    return {"name": "check", "arguments": {"element_id": element_id, "checked": checked}}


def goto(path: str) -> Call:
    return {"name": "goto", "arguments": {"path": path}}


def answer(text: Any) -> Call:
    return {"name": "answer", "arguments": {"text": str(text)}}


def search(query: str) -> list[Call]:
    return [type_text("search-query", query), click("search-button")]


def find_and_open(query: str, sku: str) -> list[Call]:
    """Search from the current page's search box (home or results) and open the product."""
    return [*search(query), click(f"result-{sku}")]


def add_to_cart(query: str, sku: str, quantity: int = 1) -> list[Call]:
    calls = [goto("/"), *find_and_open(query, sku)]
    if quantity != 1:
        calls.append(type_text("quantity", str(quantity)))
    calls.append(click("add-to-cart"))
    return calls


def checkout(
    address: str,
    city: str,
    postcode: str,
    *,
    shipping: str = "standard",
    coupon: str = "",
    gift_wrap: bool = False,
    name: str | None = None,
) -> list[Call]:
    calls = [click("checkout")]
    if name is not None:
        calls.append(type_text("full-name", name))
    calls += [type_text("address", address), type_text("city", city), type_text("postcode", postcode)]
    if shipping != "standard":
        calls.append(select("shipping", f"{SHIPPING[shipping][0]} - ${SHIPPING[shipping][1]:.2f}"))
    if coupon:
        calls.append(type_text("coupon", coupon))
    if gift_wrap:
        calls.append(check("gift-wrap"))
    calls.append(click("place-order"))
    return calls


def _name(sku: str) -> str:
    item = product(sku)
    assert item is not None
    return item.name


def _cheapest(category: str) -> str:
    return min(
        (item for item in PRODUCTS if item.category == category and item.stock), key=lambda item: item.price
    ).name


def _cheapest_sku(category: str) -> str:
    items = sorted((item for item in PRODUCTS if item.category == category), key=lambda item: item.price)
    assert items[0].stock > 0, "the cheapest product must be in stock for cheapest-outdoor-to-cart"
    return items[0].sku


def _best_rated(category: str) -> str:
    items = sorted((item for item in PRODUCTS if item.category == category), key=lambda item: -item.rating)
    assert items[0].rating > items[1].rating, "the best-rated product must be unique"
    return items[0].name


def _order(order_id: str) -> dict[str, Any]:
    return next(order for order in initial_shop_state()["orders"] if order["id"] == order_id)


def _order_with(sku: str) -> str:
    matches = [
        order["id"] for order in initial_shop_state()["orders"] if any(line["sku"] == sku for line in order["items"])
    ]
    assert len(matches) == 1
    return matches[0]


def _price_exactly(value: float) -> str:
    matches = [item.name for item in PRODUCTS if abs(item.price - value) < 1e-9]
    return matches[0] if len(matches) == 1 else "none"


_SETUP_CART_MUG_VASE = {"cart": [{"sku": "K-101", "quantity": 1}, {"sku": "H-303", "quantity": 1}]}
_SETUP_CART_CANDLE = {"cart": [{"sku": "H-304", "quantity": 1}]}
_SETUP_CART_THREE = {
    "cart": [{"sku": "O-203", "quantity": 2}, {"sku": "G-401", "quantity": 1}, {"sku": "K-105", "quantity": 1}]
}
_ORDER_1001 = _order("1001")


def _definitions() -> list[TaskDefinition]:
    kettle = product("K-103")
    assert kettle is not None and kettle.price >= 30, "refuse-kettle expects the kettle to cost $30 or more"
    monitor = product("O-206")
    assert monitor is not None and monitor.stock == 0
    reorder: list[Call] = [goto("/orders"), click("order-1001")]
    for line in _ORDER_1001["items"]:
        reorder += add_to_cart(line["name"].lower(), line["sku"], line["quantity"])
    reorder += checkout(_ORDER_1001["address"], _ORDER_1001["city"], _ORDER_1001["postcode"])
    return [
        # -- single-page forms ----------------------------------------------------------
        TaskDefinition(
            "account-name",
            "train",
            "Change the name on your account to 'Sam R. Rivera' and save the settings.",
            (click("nav-account"), type_text("account-name", "Sam R. Rivera"), click("account-save")),
            ("form-filling",),
        ),
        TaskDefinition(
            "newsletter-on",
            "train",
            "Subscribe to the newsletter in your account settings.",
            (click("nav-account"), check("account-newsletter"), click("account-save")),
            ("form-filling", "checkbox"),
        ),
        TaskDefinition(
            "language-de",
            "train",
            "Set the language of your account to Deutsch.",
            (click("nav-account"), select("account-language", "Deutsch"), click("account-save")),
            ("form-filling", "select"),
        ),
        TaskDefinition(
            "email-phone",
            "train",
            "Change your account email to sam@harborpine.test and your phone number to 555-0142.",
            (
                click("nav-account"),
                type_text("account-email", "sam@harborpine.test"),
                type_text("account-phone", "555-0142"),
                click("account-save"),
            ),
            ("form-filling",),
        ),
        TaskDefinition(
            "newsletter-off-spanish",
            "dev",
            "Unsubscribe from the newsletter and switch the account language to Español.",
            (
                click("nav-account"),
                check("account-newsletter", False),
                select("account-language", "Español"),
                click("account-save"),
            ),
            ("form-filling", "checkbox", "select"),
            setup={"account": {"newsletter": True}},
        ),
        TaskDefinition(
            "support-return",
            "train",
            "Contact support about returning order 1002: choose the topic 'Return', give the order number 1002 and write the message 'The kettle arrived cracked.'",
            (
                click("nav-support"),
                select("support-topic", "Return"),
                type_text("support-order", "1002"),
                type_text("support-message", "The kettle arrived cracked."),
                click("support-send"),
            ),
            ("form-filling", "select"),
        ),
        TaskDefinition(
            "support-question",
            "dev",
            "Ask support whether the Fountain Pen comes with ink: topic 'Product question', no order number, message 'Does the Fountain Pen come with ink cartridges?'",
            (
                click("nav-support"),
                select("support-topic", "Product question"),
                type_text("support-message", "Does the Fountain Pen come with ink cartridges?"),
                click("support-send"),
            ),
            ("form-filling",),
        ),
        # -- cart flows -----------------------------------------------------------------
        TaskDefinition(
            "add-mug",
            "train",
            "Add one Enamel Coffee Mug to your cart.",
            tuple(add_to_cart("coffee mug", "K-101")),
            ("search", "navigation"),
        ),
        TaskDefinition(
            "add-three-notebooks",
            "train",
            "Add 3 Linen Notebooks to your cart.",
            tuple(add_to_cart("notebook", "O-203", 3)),
            ("search", "form-filling"),
        ),
        TaskDefinition(
            "add-board-and-skillet",
            "dev",
            "Add one Bamboo Cutting Board and one Cast Iron Skillet to your cart.",
            (*add_to_cart("cutting board", "K-105"), *add_to_cart("skillet", "K-106")),
            ("search", "multi-page"),
        ),
        TaskDefinition(
            "remove-vase",
            "train",
            "Remove the Ceramic Vase from your cart and keep everything else.",
            (click("nav-cart"), click("remove-H-303")),
            ("cart",),
            setup=_SETUP_CART_MUG_VASE,
        ),
        TaskDefinition(
            "candles-to-four",
            "train",
            "Change the number of Soy Wax Candles in your cart to 4.",
            (click("nav-cart"), type_text("qty-H-304", "4"), click("update-H-304")),
            ("cart", "form-filling"),
            setup=_SETUP_CART_CANDLE,
        ),
        TaskDefinition(
            "empty-cart",
            "test",
            "Empty your cart completely.",
            (click("nav-cart"), click("remove-O-203"), click("remove-G-401"), click("remove-K-105")),
            ("cart",),
            setup=_SETUP_CART_THREE,
        ),
        TaskDefinition(
            "cheapest-outdoor-to-cart",
            "test",
            "Add one unit of the cheapest in-stock product of the Outdoor category to your cart.",
            (
                click("category-outdoor"),
                select("sort", "Price: low to high"),
                click("sort-button"),
                click(f"product-{_cheapest_sku('outdoor')}"),
                click("add-to-cart"),
            ),
            ("navigation", "comparison", "select"),
        ),
        # -- purchases --------------------------------------------------------------------
        TaskDefinition(
            "buy-tote-standard",
            "train",
            "Buy one Canvas Tote Bag with standard shipping, delivered to 12 Harbor Street, Portland, postcode 97201.",
            (*add_to_cart("tote", "G-401"), *checkout("12 Harbor Street", "Portland", "97201")),
            ("multi-page", "checkout"),
        ),
        TaskDefinition(
            "buy-bottles-express-coupon",
            "train",
            "Buy two Insulated Water Bottles with express shipping and the coupon code SAVE10, delivered to 400 Pine Avenue, Suite 3, Portland, postcode 97204.",
            (
                *add_to_cart("water bottle", "G-402", 2),
                *checkout("400 Pine Avenue, Suite 3", "Portland", "97204", shipping="express", coupon="SAVE10"),
            ),
            ("multi-page", "checkout", "select"),
        ),
        TaskDefinition(
            "buy-vase-pickup-gift",
            "test",
            "Buy one Ceramic Vase as a gift: gift wrapped, for store pickup, in the name of Alex Chen, address 9 Cedar Lane, Portland, postcode 97202.",
            (
                *add_to_cart("vase", "H-303"),
                *checkout("9 Cedar Lane", "Portland", "97202", shipping="pickup", gift_wrap=True, name="Alex Chen"),
            ),
            ("multi-page", "checkout", "checkbox", "select"),
        ),
        TaskDefinition(
            "reorder-1001",
            "test",
            "Order again exactly the items of order 1001, in the same quantities, with standard shipping to the same address as that order.",
            tuple(reorder),
            ("lookup", "multi-page", "checkout"),
        ),
        TaskDefinition(
            "buy-lantern-freeship",
            "dev",
            "Buy one Solar Lantern using the coupon FREESHIP with standard shipping, delivered to 12 Harbor Street, Portland, postcode 97201.",
            (*add_to_cart("lantern", "G-405"), *checkout("12 Harbor Street", "Portland", "97201", coupon="FREESHIP")),
            ("multi-page", "checkout"),
        ),
        # -- lookups ------------------------------------------------------------------------
        TaskDefinition(
            "price-knife",
            "train",
            "What does the Steel Chef Knife cost? Answer with the price only.",
            (*find_and_open("chef knife", "K-104"), answer(product("K-104").price)),
            ("lookup", "search"),
            answer=product("K-104").price,
        ),  # type: ignore[union-attr]
        TaskDefinition(
            "stock-skillet",
            "train",
            "How many Cast Iron Skillets are in stock? Answer with the number only.",
            (*find_and_open("skillet", "K-106"), answer(product("K-106").stock)),
            ("lookup", "search"),
            answer=product("K-106").stock,
        ),  # type: ignore[union-attr]
        TaskDefinition(
            "cheapest-office",
            "train",
            "Which product of the Office category is the cheapest? Answer with its name only.",
            (
                click("category-office"),
                select("sort", "Price: low to high"),
                click("sort-button"),
                answer(_cheapest("office")),
            ),
            ("lookup", "comparison"),
            answer=_cheapest("office"),
        ),
        TaskDefinition(
            "order-total-1003",
            "train",
            "What was the total of order 1003? Answer with the amount only.",
            (click("nav-orders"), click("order-1003"), answer(_order("1003")["total"])),
            ("lookup", "navigation"),
            answer=_order("1003")["total"],
        ),
        TaskDefinition(
            "lamp-search-count",
            "train",
            "How many products does the shop's search find for the word 'lamp'? Answer with the number only.",
            (*search("lamp"), answer(len(search_products("lamp")))),
            ("lookup", "search"),
            answer=len(search_products("lamp")),
        ),
        TaskDefinition(
            "best-rated-home",
            "dev",
            f"Which product of the {CATEGORIES['home']} category has the highest rating? Answer with its name only.",
            (click("category-home"), select("sort", "Rating"), click("sort-button"), answer(_best_rated("home"))),
            ("lookup", "comparison", "select"),
            answer=_best_rated("home"),
        ),
        TaskDefinition(
            "status-1002",
            "dev",
            "What is the status of order 1002? Answer with the status only.",
            (click("nav-orders"), click("order-1002"), answer(_order("1002")["status"])),
            ("lookup", "navigation"),
            answer=_order("1002")["status"],
        ),
        TaskDefinition(
            "sku-lantern",
            "test",
            "What is the SKU of the Solar Lantern? Answer with the SKU only.",
            (*find_and_open("solar lantern", "G-405"), answer("G-405")),
            ("lookup", "search"),
            answer="G-405",
        ),
        TaskDefinition(
            "monitor-stand-in-stock",
            "train",
            "Is the Monitor Stand in stock? Answer yes or no.",
            (*find_and_open("monitor stand", "O-206"), answer("no")),
            ("lookup", "search"),
            answer="no",
        ),
        # -- tasks whose right outcome is to do nothing -------------------------------------
        TaskDefinition(
            "kettle-only-if-cheap",
            "train",
            "Add the Glass Water Kettle to your cart only if it costs less than $30. Then answer 'added' if you added it, or 'not added' if you did not.",
            (*find_and_open("kettle", "K-103"), answer("not added")),
            ("lookup", "refusal"),
            answer="not added",
        ),
        TaskDefinition(
            "price-exactly-100",
            "test",
            "Which product costs exactly $100.00? Answer with its name, or 'none' if no product costs exactly that.",
            (
                click("category-kitchen"),
                click("nav-home"),
                click("category-office"),
                click("nav-home"),
                click("category-home"),
                click("nav-home"),
                click("category-outdoor"),
                answer(_price_exactly(100.0)),
            ),
            ("lookup", "refusal"),
            answer=_price_exactly(100.0),
        ),
        TaskDefinition(
            "support-late-blanket",
            "test",
            "The order with your Wool Throw Blanket has not arrived. Contact support with the topic 'Order problem', that order's number, and the message 'My order has not arrived yet.'",
            (
                click("nav-orders"),
                click("order-1003"),
                click("nav-support"),
                select("support-topic", "Order problem"),
                type_text("support-order", _order_with("H-301")),
                type_text("support-message", "My order has not arrived yet."),
                click("support-send"),
            ),
            ("lookup", "multi-page", "form-filling"),
        ),
    ]


TASK_DEFINITIONS: tuple[TaskDefinition, ...] = tuple(_definitions())
