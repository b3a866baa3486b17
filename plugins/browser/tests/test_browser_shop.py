"""The shop site's rules, its generated ground truth, and the plugin's light imports."""

from __future__ import annotations

import json
import subprocess
import sys

from rolloutgym_browser._shop_catalog import initial_shop_state, search_products
from rolloutgym_browser._shop_site import ShopSite
from rolloutgym_browser._site import SiteApp
from rolloutgym_browser.shop import TASK_FILE, build_tasks


def _app(**setup: object) -> SiteApp:
    return SiteApp(ShopSite(), setup or None)


CHECKOUT = [
    ("name", "Sam Rivera"),
    ("email", "sam@example.com"),
    ("address", "1 A St"),
    ("city", "Portland"),
    ("postcode", "97201"),
    ("shipping", "standard"),
    ("coupon", ""),
]


def test_task_file_is_the_replay_of_the_reference_solutions() -> None:
    stored = [json.loads(line) for line in TASK_FILE.read_text(encoding="utf-8").splitlines()]
    assert stored == json.loads(json.dumps(build_tasks())), (
        "run: python -m rolloutgym_browser.shop (and bump the env version)"
    )


def test_checkout_totals_discounts_shipping_and_gift_wrap() -> None:
    app = _app(cart=[{"sku": "G-402", "quantity": 2}])
    fields = [pair for pair in CHECKOUT if pair[0] not in ("shipping", "coupon")] + [
        ("shipping", "express"),
        ("coupon", "save10"),
        ("gift_wrap", "on"),
    ]
    response = app.handle("POST", "/checkout", fields)
    assert response.location == "/orders/1004"
    order = app.state["orders"][-1]
    # 2 x 24.95 = 49.90; 10% off = 4.99; express 14.99; gift wrap 3.00
    assert (order["subtotal"], order["discount"], order["shipping_cost"], order["total"]) == (49.9, 4.99, 14.99, 62.9)
    assert order["coupon"] == "SAVE10" and order["gift_wrap"] is True and app.state["cart"] == []


def test_checkout_refuses_bad_coupons_and_missing_fields_without_ordering() -> None:
    app = _app(cart=[{"sku": "K-101", "quantity": 1}])
    bad_coupon = [pair if pair[0] != "coupon" else ("coupon", "HALFOFF") for pair in CHECKOUT]
    assert app.handle("POST", "/checkout", bad_coupon).location == "/checkout?error=coupon"
    no_city = [pair for pair in CHECKOUT if pair[0] != "city"]
    assert app.handle("POST", "/checkout", no_city).location == "/checkout?error=city"
    assert len(app.state["orders"]) == 3 and app.state["cart"] == [{"sku": "K-101", "quantity": 1}]
    page = app.handle("GET", "/checkout?error=coupon").page
    assert page is not None and page.find("error").label == "Error: That coupon code is not valid."


def test_cart_respects_stock_and_quantities() -> None:
    app = _app()
    assert app.handle("POST", "/cart/add/O-202", [("quantity", "3")]).location == "/product/O-202?error=stock"
    assert app.handle("POST", "/cart/add/O-202", [("quantity", "two")]).location == "/product/O-202?error=quantity"
    assert app.handle("POST", "/cart/add/O-202", [("quantity", "2")]).location == "/cart"
    assert app.handle("POST", "/cart/update/O-202", [("quantity", "0")]).location == "/cart"
    assert app.state["cart"] == []
    assert (
        app.handle("POST", "/cart/add/K-102", [("quantity", "1")]).location == "/product/K-102?error=stock"
    )  # out of stock
    assert app.handle("GET", "/product/NOPE").status == 404 and app.page_errors == ["404 GET /product/NOPE"]


def test_search_matches_every_word() -> None:
    assert [item.sku for item in search_products("desk lamp")] == ["O-201", "O-202"]
    assert search_products("  ") == [] and search_products("teleporter") == []


def test_initial_state_is_fresh_each_time() -> None:
    first = initial_shop_state()
    first["orders"].clear()
    assert len(initial_shop_state()["orders"]) == 3


def test_plugin_module_imports_nothing_heavy() -> None:
    code = (
        "import sys, rolloutgym_browser.plugin, rolloutgym_browser; print(sorted(m for m in ('playwright', 'h11') if "
        "m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
