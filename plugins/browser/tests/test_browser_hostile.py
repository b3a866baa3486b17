"""Hostile actions end as scored outcomes, the same on both backends (issue 17, item 2).

Every action below is played on the ``dom`` backend and on a real Chromium; each step must
return normally (an invalid action or a harmless effect, never an exception, which the
runner would record as an unscored environment error), and the two backends must give the
same observations, counters and final score. The families: non-ASCII digits and other
non-numbers in number fields, strings of a few hundred KB in every text argument, control
characters, line breaks in one-line fields, unpaired surrogates, numbers too large for an id,
NaN/inf and other wrong types, unknown tools, ids and arguments, paths outside the site, and
too many calls in one message.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from rolloutgym_browser import BrowserEnv
from rolloutgym_browser.shop import make_shop_env, shop_tasks

HUGE = "a" * 300_000
WIDE = "é" * 1900  # 1,900 characters, 17 KB once percent-encoded

NUMBER_TEXTS = [
    "٣",
    "３",
    "３.５",
    "\u0663\u0664",
    "+3",
    "3.",
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    "inf",
    "0x10",
    "1_000",
    " 3 ",
    "1e3",
    ".5",
    "-0",
    "",
    "1e308",
    "-.5e-3",
    "00012",
    "1E5",
    "\u00a03",
    "3\u2028",
    "9" * 400,
    "1" * 5000,
    "3\n",
    "3\x00",
    "\ud800",
    "two",
    "3 apples",
]
SEARCH_TEXTS = [
    HUGE,
    "water\nbottle",
    "x\x00y",
    "\ud83d",
    "😀 bottle",
    "\u202eelttob",
    "tab\there",
    "  spaced  ",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "%00%0a",
    "a\u2028b",
    "\u200b\ufeff",
    "\U0010ffff",
    WIDE + WIDE,
]
PATHS = [
    "/" + HUGE,
    "/search?q=" + WIDE,
    "/search?q=" + "x" * 1900,
    "http://evil.example/",
    "//evil.example",
    "javascript:alert(1)",
    "/\\evil.example",
    "data:text/html,hi",
    "file:///etc/passwd",
    "/\x00",
    "/a\nb",
    "\ud800",
    "",
    "   ",
    "/%",
    "/%ZZ",
    "/..%2F..%2Fetc/passwd",
    "/?" + "&" * 1000,
    "/#frag",
    "about:blank",
    "chrome://version",
    "/product/G-401?" + "x=1&" * 300,
]
ELEMENT_IDS: list[Any] = [
    10**30,
    -(10**30),
    10**5000,
    -1,
    0,
    "does-not-exist",
    HUGE,
    "\ud800",
    "",
    "nav-home\n",
    "nav\x00home",
    True,
    None,
    3.5,
    math.nan,
    math.inf,
    ["nav-home"],
    {"id": "nav-home"},
]


def call(name: Any, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _actions() -> list[Any]:
    steps: list[Any] = [[call("goto", path="/product/G-401")]]
    steps += [[call("type", element_id="quantity", text=text)] for text in NUMBER_TEXTS]
    steps += [[call("goto", path="/")]]
    steps += [[call("type", element_id="search-query", text=text)] for text in SEARCH_TEXTS]
    steps += [[call("type", element_id="search-query", text="é" * 3000)], [call("click", element_id="search-button")]]
    steps += [[call("goto", path=path)] for path in PATHS]
    steps += [[call("click", element_id=element_id)] for element_id in ELEMENT_IDS]
    steps += [[call("type", element_id=element_id, text="x")] for element_id in ELEMENT_IDS[:8]]
    steps += [
        [call("goto", path="/account")],
        [call("type", element_id="account-email", text="  me@example.com  ")],
        [call("type", element_id="account-email", text="a\nb@example.com")],
        [call("type", element_id="account-email", text="ü@exämple.com")],
        [call("type", element_id="account-email", text="not an email")],
        [call("click", element_id="account-save")],
        [call("type", element_id="account-email", text=HUGE)],
        [call("goto", path="/support")],
        [call("type", element_id="support-message", text="line one\r\nline two\rthree")],
        [call("type", element_id="support-message", text="x" * 4000)],
        [call("type", element_id="support-message", text="x" * 4001)],
        [call("select", element_id="support-topic", option=HUGE)],
        [call("select", element_id="support-topic", option="\ud800")],
        [call("check", element_id="nav-home", checked="yes")],
        [call("check", element_id="nav-home", checked=None)],
        [call("scroll", direction="sideways")],
        [call("scroll", direction=5)],
        [call("scroll", direction=HUGE)],
        [call(None)],
        [call(123)],
        [call("x" * 1000)],
        [call("\ud800")],
        [call("goto")],
        [{"name": "goto", "arguments": '{"path": "/"}'}],
        [{"name": "goto", "arguments": ["/"]}],
        [{"name": "goto", "arguments": {"path": {"nested": [[[[["/"]]]]]}}}],
        [{"name": "goto", "arguments": {"path": "/", HUGE: 1}}],
        [{"id": 10**5000, "name": "back", "arguments": {}}],
        [{"id": {"x": 1}, "name": "back", "arguments": {}}],
        [{"id": "\ud800", "name": "back", "arguments": {}}],
        {"name": "goto", "arguments": {"path": "/"}},  # one call sent bare, not in a list
        "not a call",
        [call("back")] * 40,
    ]
    return steps


async def _play(backend: str) -> list[Any]:
    task = next(task for task in shop_tasks() if task.id == "buy-tote-standard")
    environment: BrowserEnv = make_shop_env(task, backend=backend)
    seen: list[Any] = []
    try:
        observation, info = await environment.reset(seed=0)
        seen.append(observation)
        for index, calls in enumerate(_actions()):
            if isinstance(calls, list):
                calls = [{"id": f"c{index}_{number}", **item} for number, item in enumerate(calls)]
            message = {"role": "assistant", "content": "", "tool_calls": calls}
            observation, reward, terminated, truncated, info = await environment.step(message)
            assert not terminated and reward == 0.0, (index, observation)
            info.pop("backend")
            seen.append((observation, info))
        final = await environment.step({"role": "assistant", "content": HUGE + "\ud800"})
        assert final[2] is True and final[1] == 0.0
        final[4].pop("backend")
        seen.append(final)
        return seen
    finally:
        await environment.close()


def _check(steps: list[Any]) -> None:
    infos = [step[1] for step in steps[1:-1]]
    assert infos[-1]["invalid_actions"] > 100
    for observation, _ in steps[1:-1]:
        for message in observation:
            content = message["content"] if isinstance(message["content"], str) else message["content"][0]["text"]
            assert len(content) < 20_000, content[:200]  # nothing echoes a huge argument back
    text = str(steps)
    assert "evil.example/\n" not in text


def test_hostile_actions_end_as_invalid_actions_on_dom() -> None:
    steps = asyncio.run(_play("dom"))
    _check(steps)


@pytest.mark.chromium
def test_both_backends_accept_and_refuse_the_same_actions(chromium: str) -> None:
    dom = asyncio.run(_play("dom"))
    real = asyncio.run(_play("chromium"))
    _check(real)
    assert len(dom) == len(real)
    for index, (left, right) in enumerate(zip(dom, real, strict=True)):
        assert left == right, f"step {index} differs:\ndom: {str(left)[:3000]}\nchromium: {str(right)[:3000]}"
