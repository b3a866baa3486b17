"""A token-level LLM policy plays bfcl envs through Hermes tool calls (the loop every model uses).

A scripted sampler stands in for the model (``rolloutgym.llm.ScriptedSampler`` with the
dependency-free ``CharRenderer``): it reads the prompt the loop rendered (tool definitions
included) and answers with ``<tool_call>`` blocks, which the loop parses into the env's
tool calls. The scores are the env's BFCL verdicts.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import Any

from rolloutgym.llm import CharRenderer, ScriptedSampler, TokenPolicy
from rolloutgym.registry import get_registry
from rolloutgym.rollouts import arollout

RENDERER = CharRenderer()


def _play(env_id: str, task: str, reply: Any) -> Any:
    registry = get_registry()
    policy = TokenPolicy(
        ScriptedSampler(RENDERER.encode, reply, end_token_id=CharRenderer.END), RENDERER, max_tokens=400
    )

    async def episode() -> Any:
        environment = registry.make(env_id, task=task)
        try:
            return await arollout(environment, policy, seed=0, max_steps=registry.resolve_env(env_id).spec.max_steps)
        finally:
            environment.close()

    return asyncio.run(episode())


def _tool_call(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def test_single_turn_tool_call_is_graded() -> None:
    def reply(prompt: Sequence[int], index: int) -> str:
        text = RENDERER.decode(prompt)
        assert "calculate_triangle_area" in text, "the tool definitions reach the model"
        return _tool_call("calculate_triangle_area", {"base": 10, "height": 5})

    trajectory = _play("bfcl/simple-v0", "simple_python_0", reply)
    assert trajectory.score.value == 1.0
    wrong = _play(
        "bfcl/simple-v0",
        "simple_python_0",
        lambda prompt, index: _tool_call("calculate_triangle_area", {"base": 5, "height": 10}),
    )
    assert wrong.score.value == 0.0 and "base" in (wrong.score.feedback or "")


def test_dotted_function_names_are_called_with_underscores() -> None:
    trajectory = _play(
        "bfcl/simple-v0", "simple_python_1", lambda prompt, index: _tool_call("math_factorial", {"number": 5})
    )
    assert trajectory.score.value == 1.0


def test_multi_turn_tool_results_come_back_and_turns_advance() -> None:
    """multi_turn_base_0: the scripted model answers each user turn with the reference calls."""
    from rolloutgym_bfcl import BfclMultiTurnEnv, category_for_env, tasks_for_env

    env_id = "bfcl/multi-turn-base-v0"
    task = tasks_for_env(env_id)[0]
    reference = BfclMultiTurnEnv(task, category_for_env(env_id))
    reference.reset(seed=0)
    per_turn: list[list[dict[str, Any]]] = []
    while True:
        action = reference.oracle_action()
        if action.get("tool_calls"):
            per_turn.append(action["tool_calls"])
            _, _, done, _, _ = reference.step(action)
            reference.step(reference.oracle_action())  # ends the turn
        else:
            per_turn.append([])
            _, _, done, _, _ = reference.step(action)
        if done or len(per_turn) == len(task.question):
            break

    def reply(prompt: Sequence[int], index: int) -> str:
        text = RENDERER.decode(prompt)
        turn = len(re.findall(r"<\|im_start\|>user", text)) - 1
        last = text.rsplit("<|im_start|>", 2)[-2]
        if last.startswith("tool") or not per_turn[turn]:
            return "Done."
        return "".join(_tool_call(call["name"], call["arguments"]) for call in per_turn[turn])

    trajectory = _play(env_id, task.id, reply)
    assert trajectory.score.value == 1.0, trajectory.score.feedback
    tool_messages = [
        message
        for step in trajectory.steps
        for message in (step.observation or [])
        if isinstance(message, dict) and message.get("role") == "tool"
    ]
    assert tool_messages, "tool results are returned to the model"


def test_openai_policy_end_to_end_through_the_cli(tmp_path: Any) -> None:
    """``rolloutgym run bfcl/simple-v0 --policy openai:M --base-url URL`` against a real local server.

    The server is rolloutgym-openai's scripted chat-completions server on 127.0.0.1 (no
    network); skipped when that plugin is not installed.
    """
    import subprocess
    import sys

    import pytest

    testing = pytest.importorskip("rolloutgym_openai.testing")
    out = tmp_path / "run.jsonl"
    reply = testing.Reply(
        content=None,
        tool_calls=({"id": "c1", "name": "calculate_triangle_area", "arguments": '{"base": 10, "height": 5}'},),
    )
    with testing.ChatCompletionsServer([reply]) as server:
        command = [
            sys.executable,
            "-m",
            "rolloutgym",
            "run",
            "bfcl/simple-v0",
            "--policy",
            "openai:test-model",
            "--base-url",
            server.url,
        ]
        result = subprocess.run(
            [*command, "--limit", "1", "-q", "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**__import__("os").environ, "OPENAI_API_KEY": "test"},
        )
        requests = list(server.requests)
    assert result.returncode == 0, result.stderr
    (tool,) = requests[0]["tools"]
    assert tool["type"] == "function" and tool["function"]["name"] == "calculate_triangle_area"
    assert tool["function"]["parameters"]["properties"]["base"]["type"] == "integer"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[-1]["scores"][0]["value"] == 1.0
