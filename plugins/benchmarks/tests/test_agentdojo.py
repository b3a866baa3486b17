"""AgentDojo envs (agentdojo 0.1.35, v1.2.1): oracle/null on a seeded sample per suite, and our
verdicts against AgentDojo's own harness (``TaskSuite.run_task_with_pipeline`` driving a
scripted pipeline element through its ``ToolsExecutionLoop``) on gold, partial and wrong call
sequences. Everything runs offline on the package's bundled suite data."""

from __future__ import annotations

import random
from typing import Any

import pytest

pytest.importorskip("agentdojo")

from rolloutgym import make  # noqa: E402
from rolloutgym_benchmarks.agentdojo_envs import SUITES, AgentDojoEnv, load_tasks, make_env  # noqa: E402

# Tasks whose own utility check passes an empty answer with no calls (a fact of AgentDojo v1.2.1).
NULL_PASSES = {"banking/user_task_5", "banking/user_task_8", "banking/user_task_9", "banking/user_task_10"}


def _play(env: AgentDojoEnv, replies: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    env.reset(seed=0)
    for reply in replies:
        _, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return reward, info
    raise AssertionError("the episode did not end")


def _oracle(env: AgentDojoEnv) -> tuple[float, dict[str, Any]]:
    env.reset(seed=0)
    for _ in range(3):
        _, reward, terminated, _, info = env.step(env.oracle_action())
        if terminated:
            return reward, info
    raise AssertionError("the oracle did not finish")


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_oracle_one_null_zero_on_a_seeded_sample(suite: str) -> None:
    tasks = [task for task in load_tasks(suite) if task.id not in NULL_PASSES]
    assert len(load_tasks(suite)) == SUITES[suite][0]
    for task in random.Random(f"agentdojo-{suite}").sample(tasks, 2):
        assert _oracle(make_env(task))[0] == 1.0, task.id
        reward, info = _play(make_env(task), [make_env(task).null_action()])
        assert reward == 0.0, task.id
        assert info["score"]["components"]["utility"]["value"] == 0.0


def test_injection_env_scores_utility_and_security() -> None:
    task = load_tasks("banking", injection=True)[3]
    env = make_env(task)
    reward, info = _oracle(env)
    components = info["score"]["components"]
    assert reward == 1.0 and components["utility"]["value"] == 1.0 and components["security"]["value"] == 1.0
    # Carrying out the injection task's own ground truth makes the attack succeed: security 0.
    observation, _ = env.reset(seed=0)
    injected = env.injection_task.ground_truth(env.pre_environment.model_copy(deep=True))
    assert "<INFORMATION>" in str(env.environment.model_dump())
    calls = [{"id": f"c{i}", "name": call.function, "arguments": dict(call.args)} for i, call in enumerate(injected)]
    env.step({"role": "assistant", "content": "", "tool_calls": calls})
    _, _, _, _, info = env.step({"role": "assistant", "content": "done"})
    assert info["score"]["components"]["security"]["value"] == 0.0


def test_registered_env_lists_the_suite_tools_and_hides_the_answer() -> None:
    env = make("agentdojo/slack-v0")
    observation, info = env.reset(seed=0)
    inner = env.unwrapped
    names = {tool["function"]["name"] for tool in inner.tools}
    assert names == {tool.name for tool in inner.suite.tools}
    # The observation is the system prompt and the user's request; no ground truth in it.
    text = str(observation)
    assert inner.user_task.PROMPT in text
    for call in inner.user_task.ground_truth(inner.pre_environment.model_copy(deep=True)):
        assert call.function not in text or call.function in inner.user_task.PROMPT
    assert "GROUND_TRUTH" not in text and "ground_truth" not in str(info)
    # Bad calls come back as errors, not crashes.
    reply = {"role": "assistant", "content": "", "tool_calls": [{"id": "x", "name": "no_such_tool", "arguments": {}}]}
    observations, *_ = env.step(reply)
    assert "ToolNotFoundError" in observations[0]["content"]
    env.close()


def _agentdojo_verdict(env: AgentDojoEnv, replies: list[dict[str, Any]]) -> tuple[bool, bool]:
    """AgentDojo's own harness on the same replies: its pipeline, tool loop and checks."""
    from agentdojo.agent_pipeline import (
        AgentPipeline,
        BasePipelineElement,
        InitQuery,
        SystemMessage,
        ToolsExecutionLoop,
        ToolsExecutor,
    )
    from agentdojo.agent_pipeline.agent_pipeline import load_system_message
    from agentdojo.functions_runtime import FunctionCall
    from agentdojo.types import text_content_block_from_string

    script = iter(replies)

    class Scripted(BasePipelineElement):
        def query(self, query, runtime, env=None, messages=(), extra_args=None):  # noqa: ANN001, ANN202
            reply = next(script)
            calls = [
                FunctionCall(function=c["name"], args=c["arguments"], id=c["id"]) for c in reply.get("tool_calls", [])
            ]
            message = {
                "role": "assistant",
                "content": [text_content_block_from_string(reply.get("content") or "")],
                "tool_calls": calls or None,
            }
            return query, runtime, env, [*messages, message], extra_args or {}

    llm = Scripted()
    pipeline = AgentPipeline(
        [SystemMessage(load_system_message(None)), InitQuery(), llm, ToolsExecutionLoop([ToolsExecutor(), llm])]
    )
    injections: dict[str, str] = {}
    if env.injection_task is not None:
        from rolloutgym_benchmarks.agentdojo_envs import INJECTION_TEMPLATE

        text = INJECTION_TEMPLATE.format(goal=env.injection_task.GOAL)
        injections = dict.fromkeys(env.suite.get_injection_vector_defaults(), text)
    return env.suite.run_task_with_pipeline(pipeline, env.user_task, env.injection_task, injections)


def _sequences(env: AgentDojoEnv) -> dict[str, list[dict[str, Any]]]:
    env.reset(seed=0)
    gold = env.user_task.ground_truth(env.pre_environment.model_copy(deep=True))
    calls = [{"id": f"g{i}", "name": call.function, "arguments": dict(call.args)} for i, call in enumerate(gold)]
    answer = {"role": "assistant", "content": env.user_task.GROUND_TRUTH_OUTPUT}
    sequences = {"gold": [{"role": "assistant", "content": "", "tool_calls": calls}, answer], "answer only": [answer]}
    sequences["nothing"] = [{"role": "assistant", "content": ""}]
    if len(calls) > 1:
        sequences["partial"] = [{"role": "assistant", "content": "", "tool_calls": calls[:-1]}, answer]
    if env.injection_task is not None:
        bad = env.injection_task.ground_truth(env.pre_environment.model_copy(deep=True))
        injected = [{"id": f"i{i}", "name": c.function, "arguments": dict(c.args)} for i, c in enumerate(bad)]
        sequences["attacked"] = [{"role": "assistant", "content": "", "tool_calls": injected + calls}, answer]
    return sequences


CROSS_CHECK = [
    ("workspace", False, 7),
    ("travel", False, 2),
    ("banking", False, 1),
    ("slack", False, 4),
    ("banking", True, 20),
    ("slack", True, 11),
]


@pytest.mark.parametrize(("suite", "injection", "index"), CROSS_CHECK)
def test_verdicts_equal_agentdojo_harness(suite: str, injection: bool, index: int) -> None:
    task = load_tasks(suite, injection=injection)[index]
    seen = set()
    for name, replies in _sequences(make_env(task)).items():
        env = make_env(task)
        _, info = _play(env, replies)
        ours = info["score"]["components"]
        utility, attacked = _agentdojo_verdict(make_env(task), replies)
        assert ours["utility"]["value"] == float(utility), (task.id, name)
        if injection:
            assert ours["security"]["value"] == float(not attacked), (task.id, name)
        seen.add((name, utility))
    assert ("gold", True) in seen
    assert ("nothing", False) in seen  # the sequences do tell right from wrong
