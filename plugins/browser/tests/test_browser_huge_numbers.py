"""Integers past Python's int-to-text limit in every tool call of the browser envs (issue 26, class 3).

Before: an argument object keyed by ``7 * 10**5000`` ended a ``browser/shop-v0`` episode
as an env error (the refusal message ``str()``-ed the key), and on ``browser/miniwob-v0``
``click_at(x=7 * 10**5000)`` did too (``math.isfinite`` of an int past the float range),
as did ``press_key(key=7 * 10**5000)``. A quantity of 5000 digits sent to the shop's
cart made ``int()`` refuse it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rolloutgym_browser.miniwob import make_miniwob_env
from rolloutgym_browser.shop import make_shop_env, shop_tasks
from rolloutgym_browser.testing import require_chromium
from rolloutgym_protocol.display import int_text
from rolloutgym_testing import play_huge_number_actions
from rolloutgym_testing.huge_numbers import DIGITS, HUGE


def test_every_tool_call_with_a_huge_number_is_answered_on_dom() -> None:
    assert asyncio.run(play_huge_number_actions(make_shop_env(shop_tasks()[0], backend="dom"))) == []


def _call(name: str, arguments: dict[Any, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": name, "arguments": arguments}]}


def test_a_5000_digit_quantity_is_refused_by_the_shop_not_raised() -> None:
    from rolloutgym_browser._shop_forms import _quantity

    assert _quantity(DIGITS) is not None and _quantity(DIGITS) > 10**17  # more than any stock: "not enough stock"
    assert _quantity("²") is None and _quantity("3") == 3  # str.isdigit() says yes to "²"; int() says no


@pytest.mark.chromium
def test_miniwob_position_and_key_calls_with_huge_numbers_are_invalid_actions() -> None:
    require_chromium()
    pytest.importorskip("miniwob", reason="the miniwob extra is not installed")
    shown = int_text(HUGE)
    cases = [
        (_call("click_at", {"x": HUGE, "y": 10}), f"click_at: x={shown} is outside the page"),
        (_call("click_at", {"x": 10, "y": -HUGE}), f"click_at: y={int_text(-HUGE)} is outside the page"),
        (_call("drag", {"from_x": 1, "from_y": 1, "to_x": [HUGE], "to_y": 3}), "must be a number of pixels"),
        (_call("press_key", {"key": HUGE}), "is not a key"),
        (_call("click_at", {HUGE: 1, "x": 1, "y": 1}), "unknown argument(s) about 7.00000e+5000"),
    ]

    async def play() -> None:
        environment = make_miniwob_env("click-button")
        try:
            await environment.reset(seed=1)
            for action, expected in cases:
                observation, reward, terminated, _, info = await environment.step(action)
                content = observation[0]["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                assert text.startswith("error: ") and expected in text, text[:300]
                assert not terminated and reward == 0.0
            assert info["invalid_actions"] == len(cases)
        finally:
            await environment.close()

    asyncio.run(play())
