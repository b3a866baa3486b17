"""Integers past Python's int-to-text limit in every place a chat env's tool calls can hold one.

``str(7 * 10**5000)`` raises ``ValueError`` (:func:`sys.set_int_max_str_digits`), and so do
``repr``, f-strings and :func:`json.dumps` of anything that holds it; ``json.loads`` of a
5000-digit number raises too. :func:`huge_number_actions` builds, from an env's tool
definitions, actions that put such numbers in every argument (alone, negative, in lists,
as keys, nested), as tool names, call ids, argument objects, message content and JSON text;
:func:`play_huge_number_actions` plays them and returns what went wrong: an exception out of
``step`` (an env error, the run-killer), an observation that is not recordable, or a reward
that is not a float. A sound env answers each with a tool error or a result, and scores the
episode it ends.

.. code-block:: python

    async def test_huge_numbers() -> None:
        assert await play_huge_number_actions(rg.make_async("sql/shop-v0", task=0)) == []
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym_protocol import AsyncEnv, Trajectory, as_async, find_attribute
from rolloutgym_protocol.display import safe_str

__all__ = ["HUGE", "huge_number_actions", "huge_number_values", "play_huge_number_actions"]

HUGE = 7 * 10**5000
"""An integer ``str()`` refuses (Python's default limit is 4300 digits)."""

DIGITS = "9" * 5000
"""A number written with more digits than ``json.loads`` accepts."""


def huge_number_values() -> dict[str, Any]:
    """Values holding :data:`HUGE`, by label."""
    return {
        "huge": HUGE,
        "negative": -HUGE,
        "in a list": [1, HUGE],
        "in an object": {"k": HUGE},
        "as a key": {HUGE: 1},
        "nested": {"a": [{"b": -HUGE}]},
    }


def _assistant(tool_calls: Any = None, content: Any = "") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return message


def _tool_actions(name: str, properties: Sequence[str]) -> list[tuple[str, Any]]:
    actions: list[tuple[str, Any]] = []
    for argument in properties or ["x"]:
        for label, value in huge_number_values().items():
            arguments = {other: "x" for other in properties}
            arguments[argument] = value
            actions.append(
                (f"{name}.{argument}={label}", _assistant([{"id": "c", "name": name, "arguments": arguments}]))
            )
    as_text = "{" + ", ".join(f'"{other}": {DIGITS}' for other in properties) + "}"
    in_lists = "{" + ", ".join(f'"{other}": [-{DIGITS}]' for other in properties) + "}"
    for label, arguments in (
        ("arguments {HUGE: 1}", {HUGE: 1}),
        ("arguments HUGE", HUGE),
        ("5000-digit JSON arguments", as_text),
        ("5000-digit JSON in lists", in_lists),
        ("5000-digit strings", {other: DIGITS for other in properties}),
        ("OpenAI shape", None),
    ):
        call: dict[str, Any] = {"id": "c", "name": name, "arguments": arguments}
        if arguments is None:
            call = {"id": "c", "type": "function", "function": {"name": name, "arguments": f'{{"x": {DIGITS}}}'}}
        actions.append((f"{name} {label}", _assistant([call])))
    actions.append((f"{name} id HUGE", _assistant([{"id": HUGE, "name": name, "arguments": {}}])))
    return actions


def huge_number_actions(tools: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """``(label, action)`` pairs for OpenAI-style ``tools``; the last ones end the episode (final answers)."""
    actions: list[tuple[str, Any]] = []
    for tool in tools:
        function = tool.get("function", tool)
        parameters = function.get("parameters") or {}
        properties = list(parameters.get("properties") or {})
        actions.extend(_tool_actions(str(function.get("name")), properties))
    actions += [
        ("tool name HUGE", _assistant([{"id": "c", "name": HUGE, "arguments": {}}])),
        ("tool_calls HUGE", _assistant(HUGE)),
        ("a call that is HUGE", _assistant([HUGE])),
        ("role HUGE", {"role": HUGE, "content": "x"}),
        ("final answer HUGE", _assistant(content=HUGE)),
        ("final answer of parts", _assistant(content=[{"type": "text", "text": HUGE}, HUGE])),
        ("final answer of 5000 digits", _assistant(content=DIGITS)),
        ("final answer [5000 digits]", _assistant(content=f"[{DIGITS}]")),
    ]
    return actions


def _recordable(observation: Any, reward: Any) -> str | None:
    """Why a step result could not be recorded, or ``None``."""
    if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
        return f"reward {safe_str(reward)[:60]} is not a finite number"
    json.dumps(Trajectory(observation, ()).to_dict(), allow_nan=False)  # raises if not strict JSON
    messages = observation if isinstance(observation, list) else [observation]
    for message in messages:
        content = message.get("content") if isinstance(message, Mapping) else None
        if content is not None and not isinstance(content, (str, list)):
            return f"an observation message has content of type {type(content).__name__}"
    return None


async def play_huge_number_actions(environment: Any, *, seed: int = 0) -> list[str]:
    """Play :func:`huge_number_actions` on ``environment`` (closed at the end); every problem, as a line."""
    env: AsyncEnv[Any, Any] = environment if isinstance(environment, AsyncEnv) else as_async(environment)
    tools = find_attribute(env, "tools") or []
    problems: list[str] = [] if tools else ["the env exposes no tools (env.tools): only the final answers were tried"]
    try:
        await env.reset(seed=seed)
        for label, action in huge_number_actions(tools):
            try:
                observation, reward, terminated, truncated, _ = await env.step(action)
                problem = _recordable(observation, reward)
            except Exception as exc:  # the env error the huge number caused
                problem, terminated = f"{type(exc).__name__}: {safe_str(exc)[:200]}", True
            if problem is not None:
                problems.append(f"{label}: {problem}")
            if terminated or truncated:
                await env.reset(seed=seed)
    finally:
        await env.close()
    return problems
