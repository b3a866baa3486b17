"""``browser/miniwob-v0``: the MiniWoB++ pages of the ``miniwob`` package on real Chromium.

Every reward here is computed by the package's own task JavaScript; the tests check that
the environment starts seeded episodes, shows the page, performs actions as real input
events, reads the page's reward and refuses what it must. The CI sample is the scripted
subset (oracle 1.0 on two seeds each) plus every 25th task (null -1, seeded start); the
full pass over all 125 tasks is ``benchmarks/miniwob_pass.py``.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rolloutgym_browser._miniwob_oracle import SCRIPTED
from rolloutgym_browser.miniwob import MINIWOB_INSTALL_HINT, make_miniwob_env, miniwob_html_root, miniwob_tasks
from rolloutgym_browser.testing import require_chromium
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_testing import EnvConformanceTests

ENV_ID = "browser/miniwob-v0"


@pytest.fixture(autouse=True)
def _needs_chromium_and_miniwob(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("chromium") is not None:
        require_chromium()
        pytest.importorskip("miniwob", reason="the miniwob extra is not installed")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": name, "arguments": arguments}]}


async def _play(task: str, seed: int, actions: list[Any]) -> tuple[list[Any], float, dict[str, Any]]:
    """Reset ``task`` with ``seed`` and play ``actions`` (callables get the last observation)."""
    environment = make_miniwob_env(task)
    try:
        observation, info = await environment.reset(seed=seed)
        observations, reward = [observation], 0.0
        for action in actions:
            if callable(action):
                action = action(observations[-1])
            observation, reward, terminated, _, info = await environment.step(action)
            observations.append(observation)
            if terminated:
                break
        return observations, reward, info
    finally:
        await environment.close()


def _text(observation: list[dict[str, Any]]) -> str:
    content = observation[-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def _element_id(text: str, pattern: str) -> str:
    match = re.search(r"\[(\d+)\] " + pattern, text)
    assert match, f"no element matching {pattern!r} in:\n{text}"
    return match.group(1)


# -- the task list (no browser) ---------------------------------------------------------------


def test_task_list_is_the_packages_registration() -> None:
    """Our 125 tasks are exactly the package's registered MiniWoB envs, each with its page."""
    root = miniwob_html_root()
    registration = (root.parent / "registration.py").read_text(encoding="utf-8")
    registered = {
        name for name in re.findall(r'id="miniwob/([\w.-]+)-v1"', registration) if not name.startswith("flight.")
    }
    ours = [task.id for task in miniwob_tasks()]
    assert len(ours) == len(set(ours)) == 125
    assert set(ours) == registered
    for task in miniwob_tasks():
        assert (root / "miniwob" / task.file).is_file(), task.file
        assert task.needs and set(task.needs) <= {"elements", "coordinates", "drag", "keyboard", "scroll"}
    assert {task.id for task in miniwob_tasks() if task.scripted} == set(SCRIPTED)


def test_listing_and_tasks_import_neither_miniwob_nor_playwright() -> None:
    code = (
        "import sys\n"
        "from rolloutgym.registry import get_registry\n"
        "registry = get_registry()\n"
        "assert 'browser/miniwob-v0' in registry.env_specs()\n"
        "assert len(registry.tasks('browser/miniwob-v0')) == 125\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('miniwob', 'playwright', 'selenium'))\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_package_names_the_extra_and_survives_rich_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from rich.console import Console

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    with pytest.raises(ConfigError) as raised:
        make_miniwob_env("click-button")
    message = str(raised.value)
    assert "pip install miniwob==1.1.0 playwright" in message and "miniwob extra" in message
    console = Console(record=True, width=400)
    console.print(f"[bold red]error:[/] ConfigError: {message}", markup=True)  # as the CLI prints errors
    assert MINIWOB_INSTALL_HINT in console.export_text()


def test_dom_backend_is_refused() -> None:
    with pytest.raises(ConfigError, match="only on the chromium backend"):
        make_miniwob_env("click-button", backend="dom")


def test_unknown_task_suggests_names() -> None:
    with pytest.raises(ConfigError, match="click-button"):
        make_miniwob_env("click-buton")


# -- episodes on Chromium ------------------------------------------------------------------------


@pytest.mark.chromium
class TestMiniWoBConformance(EnvConformanceTests):
    """The kit on scripted tasks: oracle 1.0 (the page's reward), null -1 (the page's failure reward)."""

    env_id = ENV_ID
    min_score = -1.0

    def task_ids(self) -> list[str]:
        return ["click-button", "enter-text", "click-checkboxes", "login-user"]


@pytest.mark.chromium
@pytest.mark.parametrize("task", sorted(SCRIPTED))
def test_scripted_oracle_solves_its_task(task: str) -> None:
    from rolloutgym_testing import run_episode

    for seed in (3, 11):
        trajectory = run_episode(ENV_ID, "oracle", task=task, seed=seed)
        assert trajectory.score.value == 1.0, (task, seed, trajectory.score.feedback)


@pytest.mark.chromium
def test_seeded_sample_of_all_tasks_starts_and_null_scores_minus_one() -> None:
    """Every 25th task (and one with a structured utterance): the page starts, the same seed
    gives the same episode, giving up scores -1."""
    # email-inbox-nl-turk's page returns its utterance as {utterance, fields}.
    sample = [task.id for task in miniwob_tasks()][::25] + ["email-inbox-nl-turk"]

    async def check() -> None:
        for task in sample:
            first, reward, info = await _play(task, 5, [{"role": "assistant", "content": ""}])
            again, _, _ = await _play(task, 5, [])
            assert first[0][1]["content"].startswith("Task: ") and len(first[0][1]["content"]) > 10, task
            assert first[0] == again[0], f"{task}: the same seed gave a different first observation"
            assert reward == -1.0 and info["done"], (task, info)
            assert info["score"]["metadata"]["raw_reward"] == -1.0

    asyncio.run(check())


@pytest.mark.chromium
def test_seeds_pick_different_episodes_and_a_wrong_click_gets_the_pages_failure_reward() -> None:
    async def check() -> None:
        utterances = set()
        for seed in range(4):
            observations, _, _ = await _play("click-button", seed, [])
            utterances.add(observations[0][1]["content"].splitlines()[0])
        assert len(utterances) > 1
        observations, reward, info = await _play(
            "click-test-2",
            2,
            [lambda observation: _call("click", element_id=_element_id(_text(observation), 'button "TWO"'))],
        )
        assert reward == -1.0 and info["done"] and "ended before" not in info["score"]["feedback"]

    asyncio.run(check())


@pytest.mark.chromium
def test_partial_reward_is_the_pages_raw_reward() -> None:
    """click-checkboxes scores (right - wrong) / boxes: submitting with nothing checked is partial or -1."""

    async def check() -> None:
        for seed in range(6):
            observations, reward, _ = await _play(
                "click-checkboxes",
                seed,
                [lambda observation: _call("click", element_id=_element_id(_text(observation), 'button "Submit"'))],
            )
            task_line = observations[0][1]["content"].splitlines()[0]
            boxes = len(re.findall(r"\] checkbox ", _text(observations[0])))
            wanted = 0 if "Select nothing" in task_line else len(task_line.split(","))
            assert reward == pytest.approx((boxes - 2 * wanted) / boxes), (task_line, boxes)

    asyncio.run(check())


@pytest.mark.chromium
def test_click_at_a_shown_position_is_a_real_mouse_click() -> None:
    async def check() -> None:
        def at_one(observation: list[dict[str, Any]]) -> dict[str, Any]:
            match = re.search(r'button "ONE" @\((\d+),(\d+)\)', _text(observation))
            assert match
            return _call("click_at", x=int(match.group(1)), y=int(match.group(2)))

        _, reward, info = await _play("click-test-2", 4, [at_one])
        assert reward == 1.0 and info["invalid_actions"] == 0

    asyncio.run(check())


@pytest.mark.chromium
def test_bad_calls_are_invalid_actions_and_the_episode_goes_on() -> None:
    bad = [
        _call("click_at", x=5000, y=10),
        _call("click_at", x="10", y=10),
        _call("drag", from_x=1, from_y=1, to_x=float("nan"), to_y=3),
        _call("press_key", key="NotAKey"),
        _call("press_key", key="Enter; rm -rf"),
        _call("goto", path="/"),
        _call("click", element_id="999"),
        _call("check", element_id="1"),
        _call("select", element_id="1", option="nope"),
        _call("fly"),
    ]

    async def check() -> None:
        observations, reward, info = await _play("enter-text", 1, bad)
        assert info["invalid_actions"] == len(bad)
        errors = [message["content"] for observation in observations[1:] for message in observation]
        assert all(error.startswith("error: ") for error in errors), errors
        assert "outside the page" in errors[0] and "not a key" in errors[3] and "single page" in errors[5]
        assert reward == 0.0  # not over: refused calls do not end the episode

    asyncio.run(check())


@pytest.mark.chromium
def test_drag_and_keys_reach_the_page() -> None:
    """A drag selects text and keys type into the focused field (the page's own events fire)."""

    async def check() -> None:
        environment = make_miniwob_env("enter-text")
        try:
            observation, _ = await environment.reset(seed=1)
            box = _element_id(_text(observation), "textbox")
            await environment.step(_call("click", element_id=box))
            for key in ("a", "b", "Shift+C"):
                observation, *_ = await environment.step(_call("press_key", key=key))
            assert 'value="abC"' in _text(observation)
            observation, *_ = await environment.step(_call("drag", from_x=5, from_y=5, to_x=100, to_y=120))
            assert _text(observation).startswith("dragged from (5, 5) to (100, 120)")
        finally:
            await environment.close()

    asyncio.run(check())


@pytest.mark.chromium
def test_only_the_packages_own_files_load() -> None:
    """Only the package's html folder is reachable: other origins are aborted, the server refuses other paths."""

    async def check() -> None:
        environment = make_miniwob_env("click-button")
        try:
            await environment.reset(seed=0)
            page = environment.page
            outcomes = await page._run(
                "probing",
                page._page.evaluate(
                    """async () => {
                      const probe = (url) => fetch(url).then((response) => response.status, () => 'blocked');
                      return [await probe('http://127.0.0.1:9/x'), await probe('https://example.com/'),
                              await probe('file:///etc/hostname'), await probe('/core/core.js'),
                              await probe('/%2e%2e/registration.py'), await probe('/miniwob/')];
                    }"""
                ),
            )
            assert outcomes == ["blocked", "blocked", "blocked", 200, 404, 404]
            blocked = environment._info()["blocked_requests"]
            assert any(url.startswith("https://example.com") for url in blocked), blocked
        finally:
            await environment.close()

    asyncio.run(check())


@pytest.mark.chromium
def test_screenshot_is_the_task_area() -> None:
    async def check() -> None:
        environment = make_miniwob_env("click-button", screenshot=True)
        try:
            observation, _ = await environment.reset(seed=0)
            parts = observation[1]["content"]
            assert parts[0]["type"] == "text" and parts[1]["url"].startswith("data:image/png;base64,")
        finally:
            await environment.close()

    asyncio.run(check())


def test_docs_list_the_scripted_tasks() -> None:
    page = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "miniwob.md"
    text = page.read_text(encoding="utf-8")
    for task in SCRIPTED:
        assert f"`{task}`" in text, task
