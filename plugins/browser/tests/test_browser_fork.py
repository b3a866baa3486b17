"""Forking browser episodes on the dom backend: typed values, the page and the site's state are the fork's own."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym_protocol import can_fork
from rolloutgym_protocol.errors import NotForkable


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": name, "arguments": arguments}]}


def test_a_fork_keeps_its_own_typed_values_and_site_state() -> None:
    async def run() -> None:
        env = rg.make("browser/shop-v0", task=0)
        await env.reset(seed=0)
        await env.step(call("click", element_id="nav-account"))
        await env.step(call("type", element_id="account-name", text="Sam R. Rivera"))
        (child,) = await env.fork()
        try:
            await child.step(call("type", element_id="account-name", text="Someone Else"))
            _, reward_child, *_ = await child.step(call("click", element_id="account-save"))
            await child.step({"role": "assistant", "content": "Done."})
            observation, *_ = await env.step(call("click", element_id="account-save"))
            *_, info = await env.step({"role": "assistant", "content": "Done."})
            assert info["score"]["value"] == 1.0
            assert env._app.state != child._app.state
        finally:
            await env.close()
            await child.close()

    asyncio.run(run())


def test_a_chromium_fork_opens_the_page_with_the_typed_values() -> None:
    async def run() -> None:
        env = rg.make("browser/shop-v0", task=0, backend="chromium")
        children: list[Any] = []
        try:
            await env.reset(seed=0)
            await env.step(call("click", element_id="nav-account"))
            await env.step(call("type", element_id="account-name", text="Sam R. Rivera"))
            children = await env.fork(2)
            assert can_fork(env) and all(child.backend.name == "chromium" for child in children)
            page = await children[1].backend.snapshot()
            assert page.find("account-name").value == "Sam R. Rivera"
            await children[0].step(call("type", element_id="account-name", text="Someone Else"))
            await children[0].step(call("click", element_id="account-save"))
            theirs = await children[1].step(call("click", element_id="account-save"))
            mine = await env.step(call("click", element_id="account-save"))
            assert mine[:4] == theirs[:4]
            *_, info = await env.step({"role": "assistant", "content": "Done."})
            assert info["score"]["value"] == 1.0 and env._app.state != children[0]._app.state
            with pytest.raises(NotForkable, match="neither dom nor chromium"):
                env.backend.name = "custom"
                await env.fork()
        finally:
            env.backend.name = "chromium"
            for each in [env, *children]:
                await each.close()

    asyncio.run(run())
