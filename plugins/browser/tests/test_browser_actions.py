"""The tool-call contract of the browser env: validation, tool errors, observations, endings."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rolloutgym_browser import BrowserEnv, BrowserTask, Element, Page
from rolloutgym_browser._shop_site import ShopSite
from rolloutgym_browser.envs import make_backend
from rolloutgym_browser.shop import make_shop_env, shop_tasks
from rolloutgym_protocol.errors import ConfigError


def _message(*calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"c{index}", **call} for index, call in enumerate(calls)],
    }


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def _episode(*steps: Any, task_id: str = "add-mug") -> list[Any]:
    environment = make_shop_env(next(task for task in shop_tasks() if task.id == task_id))
    try:
        results = [await environment.reset(seed=0)]
        for step in steps:
            results.append(await environment.step(step))
        return results
    finally:
        await environment.close()


def test_first_observation_has_system_prompt_task_and_page() -> None:
    ((messages, info),) = _run(_episode())
    assert [message["role"] for message in messages] == ["system", "user"]
    assert "click, type" in messages[0]["content"]
    user = messages[1]["content"]
    assert user.startswith("Task: Add one Enamel Coffee Mug to your cart.")
    assert "URL: /\nTitle: Harbor & Pine - Home" in user
    assert '[search-query] textbox "Search products" value=""' in user
    assert '[category-kitchen] link "Kitchen" -> /category/kitchen' in user
    assert info["url"] == "/" and info["invalid_actions"] == 0


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (
            {"name": "fly", "arguments": {}},
            "error: unknown tool 'fly'; the tools are: click, type, select, check, goto, back, scroll, answer",
        ),
        ({"name": "click", "arguments": {}}, "error: click: missing argument(s) element_id"),
        (
            {"name": "click", "arguments": {"element_id": "nav-cart", "force": True}},
            "error: click: unknown argument(s) force",
        ),
        (
            {"name": "type", "arguments": {"element_id": "search-query", "text": 5}},
            "error: type: argument 'text' must be a string, got int",
        ),
        ({"name": "click", "arguments": "nav-cart"}, "error: click: arguments must be a JSON object, got str"),
        (
            {"name": "type", "arguments": {"element_id": "nav-cart", "text": "x"}},
            "error: [nav-cart] is a link; you can type into only a textbox",
        ),
        (
            {"name": "click", "arguments": {"element_id": "buy-now"}},
            "error: there is no element [buy-now] on this page; elements you can click:",
        ),
        (
            {"name": "goto", "arguments": {"path": "https://evil.test/"}},
            "error: goto takes a path of this site starting with '/'",
        ),
        ({"name": "scroll", "arguments": {"direction": "left"}}, "error: scroll: direction must be 'up' or 'down'"),
        ({"name": "back", "arguments": {}}, "error: there is no previous page to go back to"),
    ],
)
def test_bad_tool_calls_come_back_as_tool_errors(call: dict[str, Any], error: str) -> None:
    _, (observation, reward, terminated, truncated, info) = _run(_episode(_message(call)))
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert observation[0]["role"] == "tool" and observation[0]["tool_call_id"] == "c0"
    assert observation[0]["content"].startswith(error)
    assert "URL: /" in observation[0]["content"], "the page is shown after every step"
    assert info["invalid_actions"] == 1


def test_goto_to_another_site_is_reported_as_blocked() -> None:
    _, (_, _, _, _, info) = _run(_episode(_message({"name": "goto", "arguments": {"path": "https://evil.test/x"}})))
    assert info["blocked_requests"] == ["https://evil.test/x"]


def test_several_calls_in_one_message_each_get_a_tool_message() -> None:
    step = _message(
        {"name": "type", "arguments": {"element_id": "search-query", "text": "mug"}},
        {"name": "nope", "arguments": {}},
        {"name": "click", "arguments": {"element_id": "search-button"}},
    )
    _, (observation, *_, info) = _run(_episode(step))
    assert [message["tool_call_id"] for message in observation] == ["c0", "c1", "c2"]
    assert observation[0]["content"] == "typed into [search-query]"
    assert observation[2]["content"].startswith("clicked [search-button]; now on /search?q=mug")
    assert "[result-K-101] link" in observation[2]["content"]
    assert info["invalid_actions"] == 1


def test_answer_tool_ends_the_episode_and_ignores_later_calls() -> None:
    step = _message(
        {"name": "answer", "arguments": {"text": "done"}}, {"name": "click", "arguments": {"element_id": "nav-cart"}}
    )
    _, (observation, _, terminated, _, info) = _run(_episode(step))
    assert terminated and observation == [
        {"role": "tool", "tool_call_id": "c0", "content": "answer recorded; the episode is over"}
    ]
    assert info["score"]["metadata"]["answer"] == "done"


def test_plain_text_action_is_the_final_answer() -> None:
    _, (_, reward, terminated, _, info) = _run(_episode("48.75", task_id="price-knife"))
    assert terminated and reward == 1.0 and info["score"]["components"]["answer"]["value"] == 1.0


def test_step_after_the_end_raises() -> None:
    async def go() -> None:
        environment = make_shop_env(shop_tasks()[0])
        await environment.reset()
        await environment.step({"role": "assistant", "content": "bye"})
        with pytest.raises(RuntimeError, match="reset"):
            await environment.step({"role": "assistant", "content": "again"})
        await environment.close()
        await environment.close()

    _run(go())


def test_back_returns_to_the_previous_page_fresh() -> None:
    results = _run(
        _episode(
            _message({"name": "click", "arguments": {"element_id": "nav-cart"}}),
            _message({"name": "back", "arguments": {}}),
        )
    )
    assert results[-1][0][0]["content"].startswith("went back; now on /\n")


def test_scroll_moves_the_viewport_of_long_pages() -> None:
    elements = tuple(Element(f"item-{index}", "link", f"Item {index}", href=f"/item/{index}") for index in range(30))

    class LongSite:
        def initial_state(self, setup: Any = None) -> dict[str, Any]:
            return {}

        def render(self, path: str, query: Any, state: Any) -> Page | None:
            return Page("/", "Long", elements) if path == "/" else None

        def submit(self, path: str, fields: Any, state: Any) -> str | None:
            return None

    async def go() -> list[str]:
        environment = BrowserEnv(LongSite(), BrowserTask("long", "dev", "Look.", answer="x"), viewport=10)
        messages, _ = await environment.reset()
        down, *_ = await environment.step(_message({"name": "scroll", "arguments": {"direction": "down"}}))
        up, *_ = await environment.step(_message({"name": "scroll", "arguments": {"direction": "up"}}))
        await environment.close()
        return [messages[1]["content"], down[0]["content"], up[0]["content"]]

    first, down, up = _run(go())
    assert "[item-9]" in first and "[item-10]" not in first and "(20 lines below; scroll down to see them)" in first
    assert (
        "(5 lines above; scroll up to see them)" in down
        and "[item-5]" in down
        and "[item-14]" in down
        and "[item-4]" not in down
    )
    assert "[item-0]" in up


def test_unknown_backend_and_screenshot_on_dom_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown browser backend 'firefox'; choose one of: dom, chromium"):
        make_backend("firefox")
    with pytest.raises(ConfigError, match="screenshot=True needs the chromium backend"):
        BrowserEnv(ShopSite(), shop_tasks()[0], screenshot=True)
