"""A served env that edits its own tool list in place: the client hears of every change.

In-process (a real registry, catalog and session manager; the transports only carry the
same ``extras()`` the manager returns, which test_serve_multiplex checks over the wire).
"""

from __future__ import annotations

import asyncio
from typing import Any

import gymnasium as gym
from rolloutgym import AsyncEnv
from rolloutgym.registry import Registry
from rolloutgym.serve.catalog import Catalog
from rolloutgym.serve.sessions import SessionManager
from rolloutgym_protocol import EnvSpec, hookimpl


def _tool(name: str, description: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {}}}


class InPlaceTools(AsyncEnv):
    """Step 1 rewrites a tool's description in place, step 2 swaps a tool, step 3 changes nothing."""

    action_space = gym.spaces.Discrete(4)
    observation_space = gym.spaces.Discrete(10)

    def __init__(self, task: int = 0) -> None:
        self.tools = [_tool("look", "Look around."), _tool("take", "Take a thing.")]
        self.count = 0

    async def reset(self, *, seed=None, options=None):
        await super().reset(seed=seed, options=options)
        self.count = 0
        return 0, {}

    async def step(self, action):
        self.count += 1
        if self.count == 1:
            self.tools[0]["function"]["description"] = "Look around, carefully."  # same length, same object
        elif self.count == 2:
            self.tools[1] = _tool("drop", "Drop a thing.")  # same length, same list
        return self.count, 0.0, self.count >= 4, False, {}


def tasks() -> list[int]:
    return [0]


class _Plugin:
    @staticmethod
    @hookimpl
    def rolloutgym_envs():
        return [EnvSpec(id="test/inplace-v0", entry_point=f"{__name__}:InPlaceTools", tasks=f"{__name__}:tasks")]


def test_tools_edited_in_place_are_sent_once_each_change() -> None:
    registry = Registry()
    registry.register(_Plugin, name="inplace")
    manager = SessionManager(Catalog(["test/inplace-v0"], registry=registry))

    async def main() -> list[Any]:
        session = await manager.open("test/inplace-v0", transport="ws")
        opened = session.description()["tools"]
        assert [tool["function"]["description"] for tool in opened] == ["Look around.", "Take a thing."]
        sent = [(await manager.reset(session.id)).get("tools")]
        for action in range(4):
            sent.append((await manager.step(session.id, action)).get("tools"))
        await manager.close(session.id)
        return sent

    after_reset, first, second, third, fourth = asyncio.run(main())
    assert after_reset is None  # nothing changed since open
    assert first is not None and first[0]["function"]["description"] == "Look around, carefully."
    assert second is not None and [tool["function"]["name"] for tool in second] == ["look", "drop"]
    assert third is None and fourth is None  # unchanged lists are not sent again
