"""Network policy and Chromium-only features: only the local site is reachable; screenshots; CI rules."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from rolloutgym.declarative import Environment, Task, browser_config, browser_page
from rolloutgym_browser import BrowserError
from rolloutgym_browser._browser_pool import find_chromium
from rolloutgym_browser.shop import make_shop_env, shop_tasks
from rolloutgym_browser.template import compile_browser
from rolloutgym_browser.testing import require_chromium
from rolloutgym_protocol.errors import EnvFileError

PAGES = [
    browser_page(
        "https://site.test/",
        title="Home",
        elements=[
            {"type": "image", "src": "https://tracker.example/pixel.gif", "alt": "pixel"},
            {"type": "image", "src": "http://203.0.113.7/logo.png", "alt": "logo"},
            {"type": "link", "text": "Partner", "href": "https://partner.example/", "id": "partner"},
            {"type": "link", "text": "About", "href": "https://site.test/about", "id": "about"},
        ],
    ),
    browser_page("https://site.test/about", title="About", elements=[{"type": "text", "text": "We are local."}]),
]


def _environment() -> Environment:
    return Environment(
        slug="net",
        name="Net",
        template="browser",
        config=browser_config(initial_url="https://site.test/", pages=PAGES),
        tasks=[Task("Open About.", {"url": "/about"})],
    )


async def _visit(backend: str) -> list[Any]:
    environment = compile_browser(_environment())(_environment().tasks[0], backend=backend)
    try:
        _, first = await environment.reset(seed=0)
        partner = await environment.step(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "a", "name": "click", "arguments": {"element_id": "partner"}}],
            }
        )
        about = await environment.step(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "b", "name": "click", "arguments": {"element_id": "about"}}],
            }
        )
        final = await environment.step({"role": "assistant", "content": "done"})
        return [first, partner, about, final]
    finally:
        await environment.close()


def _check(first: dict[str, Any], partner: Any, about: Any, final: Any) -> None:
    assert first["blocked_requests"] == ["https://tracker.example/pixel.gif", "http://203.0.113.7/logo.png"]
    assert partner[0][0]["content"].startswith("error: [partner] leads to https://partner.example/, outside this site")
    assert "https://partner.example/" in partner[4]["blocked_requests"]
    assert about[4]["url"] == "/about"
    score = final[4]["score"]
    # The page's own blocked images are not the agent's fault; its click on the partner link is.
    assert score["value"] == 0.5 and score["components"]["no_errors"]["feedback"] == "1 invalid action(s)"


def test_dom_reports_what_a_browser_would_block() -> None:
    _check(*asyncio.run(_visit("dom")))


@pytest.mark.chromium
def test_chromium_blocks_and_reports_every_request_outside_the_site(chromium: str) -> None:
    _check(*asyncio.run(_visit("chromium")))


def test_forms_and_buttons_cannot_point_outside_the_site() -> None:
    page = browser_page(
        "/", title="T", elements=[{"type": "form", "action": "https://evil.test/collect", "elements": []}]
    )
    environment = Environment(
        slug="x",
        name="X",
        template="browser",
        config=browser_config(initial_url="/", pages=[page]),
        tasks=[Task("x", {"url": "/"})],
    )
    with pytest.raises(
        EnvFileError, match=r"config.pages\[0\].elements\[0\].action: 'https://evil.test/collect' leaves the site"
    ):
        compile_browser(environment)


@pytest.mark.chromium
def test_screenshots_come_as_png_image_parts(chromium: str) -> None:
    async def go() -> Any:
        environment = make_shop_env(shop_tasks()[0], backend="chromium", screenshot=True)
        try:
            messages, _ = await environment.reset(seed=0)
            step = await environment.step(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "a", "name": "click", "arguments": {"element_id": "nav-cart"}}],
                }
            )
            return messages, step[0], environment.observation_space
        finally:
            await environment.close()

    messages, observation, space = asyncio.run(go())
    for content in (messages[1]["content"], observation[-1]["content"]):
        text, image = content
        assert text["type"] == "text" and "URL: /" in text["text"]
        assert (
            image["type"] == "image"
            and base64.b64decode(image["url"].removeprefix("data:image/png;base64,"))[:8] == b"\x89PNG\r\n\x1a\n"
        )
    assert space.contains(messages) and space.contains(observation)


def test_missing_chromium_is_a_clear_error_a_skip_locally_and_a_failure_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("ROLLOUTGYM_CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(BrowserError, match="Chromium was not found .* Install it with 'apt-get install chromium'"):
        find_chromium()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but the chromium backend cannot run here"):
        require_chromium()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        require_chromium()
