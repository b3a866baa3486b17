"""Every shipped env that offers tools accepts every common shape of a tool call (issue 45).

For each registered env that advertises tools, the oracle's first action is rewritten in
each shape of ``rolloutgym_protocol.toolcalls`` (OpenAI's with arguments as JSON text or
as an object, ``{name, arguments}``, ``{name, parameters}``, Anthropic's ``tool_use``
blocks, a bare call, a bare list, ``tool_calls`` as one object) and stepped on a fresh
env of the same task: the reward, the end flags and the tool answers (call ids aside) are
the same as for the oracle's own shape. Real envs, no stand-ins.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest
from rolloutgym.registry import get_registry
from rolloutgym_protocol.toolcalls import TOOL_CALL_SHAPES, normalize_tool_action

TASK = {"browser/miniwob-v0": "click-button"}  # task 0 of miniwob has no scripted oracle
# Data loads of tens of seconds: tau2 and AgentDojo are represented by their other envs (the same class).
SLOW = {"tau2/airline-v0", "tau2/telecom-full-v0"}


def _tool_envs() -> list[str]:
    registry = get_registry()
    ids = []
    for spec in registry.envs():
        if spec.id in SLOW or (spec.id.startswith("agentdojo/") and spec.id != "agentdojo/banking-v0"):
            continue
        environment = registry.make(spec.id)
        try:
            if getattr(environment, "tools", None):
                ids.append(spec.id)
        finally:
            closing = environment.close()
            if inspect.isawaitable(closing):
                asyncio.run(closing)
    return ids


def _shapes(message: dict[str, Any]) -> dict[str, Any]:
    calls = message["tool_calls"]
    content = message.get("content") or ""
    openai = [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
        for c in calls
    ]
    shapes = {
        "openai": {"role": "assistant", "content": content, "tool_calls": openai},
        "openai-dict-arguments": {
            "role": "assistant",
            "content": content,
            "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls
            ],
        },
        "name-arguments": {"role": "assistant", "content": content, "tool_calls": [dict(c) for c in calls]},
        "name-parameters": {
            "role": "assistant",
            "content": content,
            "tool_calls": [{"id": c["id"], "name": c["name"], "parameters": c["arguments"]} for c in calls],
        },
        "anthropic": {
            "role": "assistant",
            "content": ([{"type": "text", "text": content}] if content else [])
            + [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]} for c in calls],
        },
        "bare-list": openai,
    }
    if len(calls) == 1:
        shapes["bare-call"] = openai[0]
        shapes["tool-calls-as-one-object"] = {"role": "assistant", "content": content, "tool_calls": openai[0]}
        shapes["anthropic-block"] = {"type": "tool_use", "id": calls[0]["id"], "name": calls[0]["name"]} | {
            "input": calls[0]["arguments"]
        }
    return shapes


async def _first_step(env_id: str, action: Any | None) -> tuple[Any, Any]:
    """(oracle's first action, what stepping ``action`` (default: that one) answers) on a fresh env of task 0."""
    environment = get_registry().make_async(env_id, task=TASK.get(env_id, 0))
    try:
        await environment.reset(seed=0)
        oracle = environment.oracle_action()
        if inspect.isawaitable(oracle):
            oracle = await oracle
        observation, reward, terminated, truncated, _ = await environment.step(oracle if action is None else action)
    finally:
        await environment.close()
    if isinstance(observation, list):
        observation = [
            {key: value for key, value in message.items() if key != "tool_call_id"}
            if isinstance(message, dict)
            else message
            for message in observation
        ]
    return oracle, (observation, reward, terminated, truncated)


@pytest.mark.parametrize("env_id", _tool_envs())
def test_every_tool_env_accepts_every_shape(env_id: str) -> None:
    oracle, expected = asyncio.run(_first_step(env_id, None))
    canonical = normalize_tool_action(oracle)
    if not (isinstance(canonical, dict) and canonical.get("tool_calls")):  # the oracle answers first: call a tool
        environment = get_registry().make(env_id, task=TASK.get(env_id, 0))
        tool = environment.tools[0].get("function", environment.tools[0])["name"]
        closing = environment.close()
        if inspect.isawaitable(closing):
            asyncio.run(closing)
        canonical = {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "name": tool, "arguments": {}}]}
        _, expected = asyncio.run(_first_step(env_id, canonical))
    for name, shaped in _shapes(canonical).items():
        assert normalize_tool_action(shaped)["tool_calls"] == [
            {"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in canonical["tool_calls"]
        ], name
        _, answered = asyncio.run(_first_step(env_id, shaped))
        assert answered == expected, (env_id, name)


def test_an_unreadable_call_gets_an_error_naming_the_shapes() -> None:
    environment = get_registry().make("toy/guess-v0", task=0)
    environment.reset(seed=0)
    observation, *_ = environment.step({"role": "assistant", "content": "", "tool_calls": [{"call": "guess"}]})
    assert TOOL_CALL_SHAPES in observation[0]["content"]
    environment = get_registry().make("sql/shop-v0", task=0)
    environment.reset(seed=0)
    observation, *_ = environment.step({"role": "assistant", "content": "", "tool_calls": [42]})
    assert TOOL_CALL_SHAPES in observation[0]["content"]
    environment.close()
