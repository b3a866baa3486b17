"""scienceworld/*-v0 (scienceworld 1.2.3) against the package's own ``ScienceWorldEnv.step``.

One simulator (a JVM, seconds to start) serves the whole module: the envs share the plugin's
pool of idle simulators, and the package's reference replays run on that same simulator. The
reference verdict of a step is the package's ``step``: its score (0-100, negative when the task
failed) and its ``isCompleted`` (completed, failed, or over ``envStepLimit`` moves). A handful
of seeded episodes here; ``benchmarks/scienceworld_oracle.py`` runs the gold paths of every
task type and cross-checks more episodes. (The conformance kit is not used: its leak check
counts the shared simulator as a leaked child process.)
"""

from __future__ import annotations

import functools
import random
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("scienceworld")

from rolloutgym.registry import get_registry  # noqa: E402
from rolloutgym_benchmarks.scienceworld_envs import (  # noqa: E402
    CATALOGUE,
    POOL,
    ScienceWorldEnv,
    ScienceWorldTask,
    load_tasks,
    make_env,
)

# Free commands, unknown ones, and moves past a 3-move limit.
JUNK = ["inventory", "eat axe", "xyzzy plugh", "look at ground", "wait1", "wait1", "wait1"]


@pytest.fixture(scope="module")
def simulator() -> Iterator[Any]:
    """The module's simulator, back in the pool for the envs between uses."""
    shared = POOL.acquire()
    POOL.release(shared)
    yield shared


def episode(env: ScienceWorldEnv, actions: list[str]) -> list[tuple[str, int, bool, float]]:
    """(observation, progress, ended, reward) after each action, until the episode ends."""
    env.reset(seed=0)
    steps = []
    for action in actions:
        observation, value, terminated, truncated, info = env.step(action)
        steps.append((observation, info["progress"], terminated or truncated, value))
        if terminated or truncated:
            break
    return steps


def package_episode(
    simulator: Any, task: ScienceWorldTask, actions: list[str], limit: int
) -> list[tuple[str, int, bool]]:
    """The package's own (observation, score, isCompleted) after each action, through ScienceWorldEnv.step.

    Its infos' list of every valid action (most of a step's cost, and no part of the score or
    of isCompleted) is left empty.
    """
    simulator.envStepLimit = limit
    simulator.get_valid_action_object_combinations = list
    simulator.load(task.task_name, task.variation, "")
    simulator.reset()
    steps = []
    for action in actions:
        observation, _, done, info = simulator.step(action)
        steps.append((observation, info["score"], bool(done)))
        if done:
            break
    return steps


@functools.cache
def gold(task: ScienceWorldTask) -> list[str]:
    env = make_env(task)
    env.reset(seed=0)
    env.oracle_action()
    actions = list(env._gold or [])
    env.close()
    return actions


def oracle_reward(task: ScienceWorldTask) -> float:
    env = make_env(task)
    env.reset(seed=0)
    for _ in range(200):
        _, value, terminated, truncated, _ = env.step(env.oracle_action())
        if terminated or truncated:
            env.close()
            return value
    raise AssertionError("the oracle did not finish")


def test_catalogue_is_the_packages(simulator: Any) -> None:
    assert simulator.get_task_names() == list(CATALOGUE) and len(CATALOGUE) == 30
    for name in random.Random(28).sample(list(CATALOGUE), 3):
        simulator.load(name, 0, "")
        entry = CATALOGUE[name]
        assert simulator.get_max_variations(name) == entry["variations"], name
        for split, variations in (
            ("train", simulator.get_variations_train()),
            ("dev", simulator.get_variations_dev()),
            ("test", simulator.get_variations_test()),
        ):
            assert sorted(variations) == [v for start, stop in entry[split] for v in range(start, stop)], name
    assert sum(entry["variations"] for entry in CATALOGUE.values()) == 7207
    description = get_registry().resolve_env("scienceworld/use-thermometer-v0").spec.description
    for part in ("540 variations", "train 270, dev 135, test 135", "source: scienceworld 1.2.3", "licence Apache-2.0"):
        assert part in description


def test_verdicts_equal_the_packages_step_by_step(simulator: Any) -> None:
    """Gold, failed (a wrong focus), junk commands cut at a step limit: each step's observation, score, end."""
    task = load_tasks("find-animal")[28]
    actions = gold(task)
    focus = next(index for index, action in enumerate(actions) if action.startswith("focus on"))
    wrong = [*actions[:focus], "focus on air", *actions[focus + 1 :]]
    cases = 0
    for replay, limit in ((actions, 100), (wrong, 100), (JUNK, 3)):
        ours = episode(make_env(task, step_limit=limit), replay)
        theirs = package_episode(simulator, task, replay, limit)
        assert [step[:3] for step in ours] == theirs, (replay, limit)
        assert ours[-1][3] == (float(theirs[-1][1] >= 100) if theirs[-1][2] else 0.0)
        cases += len(theirs)
        if replay is actions and limit == 100:
            assert ours[-1][3] == 1.0  # the gold path completes the task
    assert cases >= 12


def test_oracle_one_on_a_seeded_sample_and_null_zero_through_the_engine(simulator: Any, tmp_path: Any) -> None:
    from rolloutgym import run

    rng = random.Random(28)
    sample = rng.choice(load_tasks("use-thermometer"))
    assert oracle_reward(sample) == 1.0, sample
    env_id = "scienceworld/find-living-thing-v0"
    task = rng.choice(load_tasks("find-living-thing")).id
    for policy, expected, limit in (("oracle", 1.0, 100), ("null", 0.0, 5)):
        result = run(
            env_id, policy=policy, tasks=[task], concurrency=1, env_kwargs={"step_limit": limit}, out=tmp_path / policy
        )
        (trajectory,) = [trajectory for group in result.groups for trajectory in group.trajectories]
        assert trajectory.score.value == expected, policy


def test_hedged_focus_stuffing_and_the_answer_in_view(simulator: Any) -> None:
    task = load_tasks("find-animal")[28]
    actions = gold(task)
    focus = next(action for action in actions if action.startswith("focus on"))
    env = make_env(task)
    observation, info = env.reset(seed=0)
    assert set(info) == {"task_id", "progress", "moves"} and not any(
        a in observation for a in actions[:3] if " to " in a
    )
    _, value, terminated, _, info = env.step("focus on air")  # hedge: focus on a wrong thing first
    assert terminated and value == 0.0 and info["score"]["components"]["completed"]["value"] == 0.0
    assert "failed" in info["score"]["feedback"]
    with pytest.raises(RuntimeError):
        env.step(focus)
    env.reset(seed=0)
    _, value, terminated, _, info = env.step("focus on animal move orange box kitchen animal focus")
    assert (value, terminated, info["progress"]) == (0.0, False, 0)
    _, value, terminated, _, info = env.step({"tool": "gold"})
    assert info == {"invalid_action": True, "progress": 0} and not terminated
    env.close()


def test_listing_imports_no_scienceworld() -> None:
    code = (
        "import sys; from rolloutgym.registry import get_registry; r = get_registry(); r.envs(); "
        "r.tasks('scienceworld/boil-v0'); "
        "assert not [m for m in sys.modules if m.startswith(('scienceworld', 'py4j'))], 'imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


_HIDDEN = """
import importlib.metadata, importlib.util, sys
real_find_spec, real_version = importlib.util.find_spec, importlib.metadata.version
def find_spec(name, *args, **kwargs):
    return None if name.split('.')[0] == 'scienceworld' else real_find_spec(name, *args, **kwargs)
def version(name):
    if name == 'scienceworld':
        raise importlib.metadata.PackageNotFoundError(name)
    return real_version(name)
importlib.util.find_spec, importlib.metadata.version = find_spec, version
sys.modules['scienceworld'] = None
from rolloutgym.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_the_extra_run_says_what_to_install(tmp_path: Any) -> None:
    command = [
        sys.executable,
        "-c",
        _HIDDEN,
        "run",
        "scienceworld/boil-v0",
        "--limit",
        "1",
        "--out",
        str(tmp_path / "r"),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    message = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0
    assert "pip install scienceworld==1.2.3" in message and "openjdk-17-jre-headless" in message
    assert "Traceback" not in message


def test_commands_the_simulator_cannot_take_are_invalid_actions_not_env_errors() -> None:
    """Text that cannot cross to the Java simulator (lone surrogates, control characters, huge) is refused
    before it is sent (seen: a chaos policy's surrogates raised Py4JError and ended the episode)."""
    from rolloutgym_benchmarks.scienceworld_envs import _command_problem

    assert _command_problem("look around") is None and _command_problem("open door\tto kitchen") is None
    assert "surrogates" in _command_problem("\udc00\ud800")
    assert "control characters" in _command_problem("look\x00around")
    assert "characters long" in _command_problem("x" * 5000)
