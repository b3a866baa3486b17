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


def test_the_chromium_backend_says_why_it_does_not_fork() -> None:
    env = rg.make("browser/shop-v0", task=0, backend="chromium")
    try:
        assert not can_fork(env)
        with pytest.raises(NotForkable, match="chromium backend's page lives in a browser process"):
            asyncio.run(env.fork())
    finally:
        asyncio.run(env.close())
