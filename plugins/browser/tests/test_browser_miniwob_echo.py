"""MiniWoB++ pages cannot turn what the agent typed into script (issue 50, class 5).

``terminal`` echoes the command line with ``innerHTML``: typing
``<img src=x onerror=core.endEpisode(1)>`` and Enter scored 1.0. Every task page now gets
``_miniwob_sanitize.SANITIZE_JS`` before its own scripts; these tests play the reported route
and variants end to end on Chromium, then try every HTML sink of a page directly (the page's
own jQuery included) with markup that would run code, and check that honest markup still renders.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rolloutgym_browser.miniwob import make_miniwob_env
from rolloutgym_browser.testing import require_chromium

pytestmark = pytest.mark.chromium


@pytest.fixture(autouse=True)
def _needs_chromium_and_miniwob() -> None:
    require_chromium()
    pytest.importorskip("miniwob", reason="the miniwob extra is not installed")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": name, "arguments": arguments}]}


async def _type_in_terminal(payload: str) -> tuple[float, bool]:
    environment = make_miniwob_env("terminal")
    try:
        await environment.reset(seed=1)
        await environment.step(_call("click", element=6))  # the terminal's input (its text box)
        reward, terminated = 0.0, False
        for key in [*("Space" if char == " " else char for char in payload), "Enter"]:
            _, reward, terminated, _, _ = await environment.step(_call("press_key", key=key))
            if terminated:
                break
        return reward, terminated
    finally:
        await environment.close()


@pytest.mark.parametrize(
    "payload",
    [
        "<img src=x onerror=core.endEpisode(1)>",
        "<svg onload=core.endEpisode(1)>",
        "<details open ontoggle=core.endEpisode(1)>",
    ],
)
def test_typed_markup_echoed_by_the_terminal_does_not_score(payload: str) -> None:
    reward, terminated = asyncio.run(_type_in_terminal(payload))
    assert (reward, terminated) == (0.0, False), payload


SINKS = {
    "innerHTML": "target.innerHTML = MARKUP",
    "outerHTML": "target.appendChild(document.createElement('i')).outerHTML = MARKUP",
    "insertAdjacentHTML": "target.insertAdjacentHTML('beforeend', MARKUP)",
    "createContextualFragment": "const r = document.createRange(); r.selectNodeContents(target); "
    "target.appendChild(r.createContextualFragment(MARKUP))",
    "jQuery html": "$(target).html(MARKUP)",
    "jQuery append": "$(target).append(MARKUP)",
    "jQuery parse": "$(MARKUP).appendTo(target)",
    "document.write": "document.write(MARKUP)",
    "shadow root": "target.attachShadow({mode: 'open'}).innerHTML = MARKUP",
}
MARKUPS = [
    "<img src=x onerror=window.__forged=1>",
    "<svg><animate onbegin=window.__forged=1 attributeName=x dur=1s></animate></svg>",
    "<iframe srcdoc='<script>parent.__forged=1</script>'></iframe>",
    "<script>window.__forged=1</script>",
    "<a id=forge href='jav&#x61;script:window.__forged=1'>x</a>",
    "<input autofocus onfocus=window.__forged=1>",
    "<object data='javascript:window.__forged=1'></object>",
    "<body onload=window.__forged=1>",
]


async def _try_sinks() -> tuple[dict[str, Any], bool]:
    environment = make_miniwob_env("terminal")  # a page that loads jQuery
    try:
        await environment.reset(seed=0)
        page = environment.page  # its Playwright page lives on the browser service's loop
        return await page._service.call(_on_page(page._page))
    finally:
        await environment.close()


async def _on_page(page: Any) -> tuple[dict[str, Any], bool]:
    found = {}
    await page.evaluate("() => { window.__forged = 0; }")
    for sink, code in SINKS.items():
        for number, markup in enumerate(MARKUPS):
            await page.evaluate(
                "([code, markup]) => { const target = document.createElement('div');"
                " document.body.appendChild(target); const MARKUP = markup; eval(code);"
                " const link = document.getElementById('forge'); if (link) { link.click(); link.remove(); } }",
                [code, markup],
            )
            await asyncio.sleep(0.05)
            found[(sink, number)] = await page.evaluate("() => window.__forged")
    await asyncio.sleep(0.3)  # late events (image errors, animations) have had their turn
    late = await page.evaluate("() => window.__forged")
    honest = await page.evaluate(
        "() => { const box = document.createElement('div'); document.body.appendChild(box);"
        " box.innerHTML = '<b class=x>bold</b><table><tr><td>cell</td></tr></table>';"
        " $(box).append('<span title=\"t\">more</span>');"
        " return box.querySelector('b.x').textContent + box.querySelector('td').textContent"
        " + box.querySelector('span[title]').textContent; }"
    )
    return {**found, "late": late}, honest == "boldcellmore"


def test_no_html_sink_of_a_task_page_runs_inserted_code_and_honest_markup_renders() -> None:
    found, honest = asyncio.run(_try_sinks())
    assert len(found) == len(SINKS) * len(MARKUPS) + 1
    ran = {key: value for key, value in found.items() if value}
    assert not ran, ran
    assert honest
