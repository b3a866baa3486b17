"""The same oracle trajectory gets the same observations and the same score on both backends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from rolloutgym.builtin.policies import OraclePolicy
from rolloutgym.declarative import load_env_file
from rolloutgym.rollouts import arollout
from rolloutgym_browser.shop import make_shop_env, shop_tasks
from rolloutgym_browser.template import compile_browser

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "contact_env.py"


def _oracle_trajectory(make: Any, task: Any, backend: str) -> Any:
    async def episode() -> Any:
        environment = make(task, backend=backend)
        try:
            return await arollout(environment, OraclePolicy(), seed=0, max_steps=60)
        finally:
            await environment.close()

    return asyncio.run(episode())


def _observations(trajectory: Any) -> list[Any]:
    return [
        trajectory.initial_observation,
        *(step.observation for step in trajectory.steps),
        trajectory.steps[-1].next_observation,
    ]


def _assert_same(dom: Any, chromium: Any, label: str) -> None:
    assert len(dom.steps) == len(chromium.steps), (
        f"{label}: {len(dom.steps)} steps on dom, {len(chromium.steps)} on chromium"
    )
    for index, (left, right) in enumerate(zip(_observations(dom), _observations(chromium), strict=True)):
        assert left == right, f"{label}: observation {index} differs between backends:\ndom: {left}\nchromium: {right}"
    assert dom.score.to_dict() == chromium.score.to_dict(), f"{label}: scores differ: {dom.score} vs {chromium.score}"
    assert dom.steps[-1].info["state"] == chromium.steps[-1].info["state"], f"{label}: end states differ"


@pytest.mark.chromium
@pytest.mark.slow
def test_every_shop_task_grades_the_same_on_both_backends(chromium: str) -> None:
    for task in shop_tasks():
        dom = _oracle_trajectory(make_shop_env, task, "dom")
        real = _oracle_trajectory(make_shop_env, task, "chromium")
        assert dom.score.value == 1.0, f"{task.id}: the oracle scored {dom.score.value} on dom: {dom.score.feedback}"
        _assert_same(dom, real, task.id)


@pytest.mark.chromium
def test_template_site_grades_the_same_on_both_backends(chromium: str) -> None:
    environment = load_env_file(EXAMPLE)
    factory = compile_browser(environment)
    for task in environment.tasks:
        dom = _oracle_trajectory(factory, task, "dom")
        real = _oracle_trajectory(factory, task, "chromium")
        assert dom.score.value == 1.0, dom.score.feedback
        _assert_same(dom, real, task.instruction[:40])
        if task.instruction.startswith("Ask the sales team"):
            assert real.steps[-1].info["blocked_requests"] == ["https://cdn.example.com/acme-logo.png"]


@pytest.mark.chromium
def test_a_wrong_trajectory_fails_the_same_way_on_both_backends(chromium: str) -> None:
    task = next(task for task in shop_tasks() if task.id == "buy-tote-standard")
    actions = [
        {"name": "goto", "arguments": {"path": "/product/G-401"}},
        {"name": "type", "arguments": {"element_id": "quantity", "text": "two"}},
        {"name": "type", "arguments": {"element_id": "quantity", "text": "2"}},
        {"name": "click", "arguments": {"element_id": "add-to-cart"}},
        {"name": "click", "arguments": {"element_id": "does-not-exist"}},
        {"name": "goto", "arguments": {"path": "/search?q=water bottle"}},
        {"name": "goto", "arguments": {"path": "/nowhere"}},
        {"name": "back", "arguments": {}},
    ]

    async def play(backend: str) -> list[Any]:
        environment = make_shop_env(task, backend=backend)
        try:
            seen = [(await environment.reset(seed=0))[0]]
            for index, call in enumerate(actions):
                observation, *_ = await environment.step(
                    {"role": "assistant", "content": "", "tool_calls": [{"id": f"c{index}", **call}]}
                )
                seen.append(observation)
            seen.append(await environment.step({"role": "assistant", "content": "I added two."}))
            return seen
        finally:
            await environment.close()

    dom, real = asyncio.run(play("dom")), asyncio.run(play("chromium"))
    assert dom[-1][4].pop("backend") == "dom" and real[-1][4].pop("backend") == "chromium"
    assert dom == real
    final_info = dom[-1][4]
    assert final_info["score"]["value"] == 0.0
    assert final_info["invalid_actions"] == 2 and final_info["page_errors"] == ["404 GET /nowhere"]
    assert "error: [quantity] takes a number written with the digits 0-9, e.g. '2'; got 'two'" in dom[2][0]["content"]
    assert dom[6][0]["content"].startswith("now on /search?q=water%20bottle")
