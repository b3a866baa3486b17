"""Multi-turn envs: verdicts equal the package's ``multi_turn_checker``; calls are never evaluated.

For a seeded sample of tasks of each multi-turn category, replies built from the reference
calls and from near misses (calls split over steps, reordered, dropped, duplicated, moved
to the next turn, with a changed argument, an unknown function, a call where the right
move is to do nothing) are played through the env. The calls the env recorded, in BFCL's
decoded form, are then graded by the package's ``multi_turn_checker`` (which re-executes
them on fresh backend instances of its own); the verdicts must be equal.
"""

from __future__ import annotations

import copy
import itertools
import os
import random
from typing import Any

import pytest
from rolloutgym_bfcl import CATEGORIES, BfclMultiTurnEnv, tasks_for_env

TASKS_PER_CATEGORY = 6
MULTI_TURN = [category for category in CATEGORIES if category.kind == "multi_turn"]
_counter = itertools.count()

Turns = list[list[list[dict[str, Any]]]]  # turn -> step -> calls ({name: arguments})


def _reference_turns(environment: BfclMultiTurnEnv) -> Turns:
    """The oracle's calls per turn (one step per turn), read by playing the oracle."""
    environment.reset(seed=0)
    turns: Turns = []
    current: list[list[dict[str, Any]]] = []
    while True:
        action = environment.oracle_action()
        if action.get("tool_calls"):
            current.append([{call["name"]: call["arguments"]} for call in action["tool_calls"]])
        else:
            turns.append(current)
            current = []
        _, _, terminated, truncated, _ = environment.step(action)
        if terminated or truncated:
            return turns


def _first_busy(turns: Turns) -> int:
    return next(index for index, turn in enumerate(turns) if turn)


def _changed_argument(call: dict[str, Any]) -> dict[str, Any]:
    name, arguments = next(iter(call.items()))
    for key, value in arguments.items():
        if type(value) is str:
            return {name: {**arguments, key: value + "_x"}}
        if type(value) in (int, float) and type(value) is not bool:
            return {name: {**arguments, key: value + 1}}
    return {name: {**arguments, "unexpected": 1}}


def _variants(turns: Turns) -> list[tuple[str, Turns]]:
    variants: list[tuple[str, Turns]] = [("reference", turns)]
    variants.append(("one call per step", [[[call] for step in turn for call in step] for turn in turns]))
    busy = _first_busy(turns)
    calls = [call for step in turns[busy] for call in step]

    def with_turn(index: int, new_calls: list[dict[str, Any]]) -> Turns:
        changed = copy.deepcopy(turns)
        changed[index] = [new_calls] if new_calls else []
        return changed

    variants.append(("dropped last call", with_turn(busy, calls[:-1])))
    variants.append(("duplicated first call", with_turn(busy, calls[:1] + calls)))
    variants.append(
        ("reversed calls", [[[call for step in turn for call in step][::-1]] if turn else [] for turn in turns])
    )
    variants.append(("empty turn", with_turn(busy, [])))
    variants.append(("unknown function", with_turn(busy, [*calls, {"teleport": {"where": "moon"}}])))
    variants.append(("changed argument", with_turn(busy, [_changed_argument(calls[-1]), *calls[:-1]][::-1])))
    if busy + 1 < len(turns):
        moved = with_turn(busy, [])
        moved[busy + 1] = [calls, *moved[busy + 1]]
        variants.append(("moved to next turn", moved))
    idle = [index for index, turn in enumerate(turns) if not turn]
    if idle:
        variants.append(("acted when it should ask", with_turn(idle[0], calls[:1])))
    return variants


def _play(environment: BfclMultiTurnEnv, turns: Turns) -> tuple[float, list[list[list[str]]], dict[str, Any]]:
    environment.reset(seed=0)
    info: dict[str, Any] = {}
    for turn in turns:
        for step in turn:
            tool_calls = [
                {"id": f"c{index}", "name": name, "arguments": arguments}
                for index, call in enumerate(step)
                for name, arguments in call.items()
            ]
            _, _, terminated, _, info = environment.step({"role": "assistant", "content": "", "tool_calls": tool_calls})
            assert not terminated
        _, reward, terminated, _, info = environment.step({"role": "assistant", "content": "Done."})
    assert terminated
    return reward, info["decoded_calls"], info


def _reference(reference_multi_turn: Any, task: Any, decoded: list[list[list[str]]]) -> bool:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    model = f"rolloutgym_check_{next(_counter)}"
    entry = {"id": task.id, "initial_config": task.initial_config, "involved_classes": list(task.involved_classes)}
    try:
        return bool(
            reference_multi_turn.multi_turn_checker(decoded, task.ground_truth, entry, task.category, model)["valid"]
        )
    finally:
        # The package caches backend instances in module globals by model name; drop ours.
        for key in [key for key in vars(multi_turn_utils) if key.startswith(model)]:
            delattr(multi_turn_utils, key)


@pytest.mark.parametrize("category", MULTI_TURN, ids=lambda category: category.name)
def test_multi_turn_verdicts_equal_the_package_checker(category: Any, reference_multi_turn: Any) -> None:
    tasks = random.Random(f"bfcl-multi-turn-{category.name}").sample(tasks_for_env(category.env_id), TASKS_PER_CATEGORY)
    compared = passed = 0
    mismatches = []
    for task in tasks:
        environment = BfclMultiTurnEnv(task, category)
        for label, turns in _variants(_reference_turns(environment)):
            reward, decoded, info = _play(environment, turns)
            assert len(decoded) == len(task.ground_truth)
            theirs = _reference(reference_multi_turn, task, decoded)
            compared += 1
            passed += theirs
            if (reward == 1.0) != theirs:
                mismatches.append(f"{task.id} [{label}] ours={reward} bfcl={theirs}: {info['score'].get('feedback')}")
        environment.close()
    assert not mismatches, (
        f"{len(mismatches)} of {compared} verdicts differ from bfcl-eval's multi_turn_checker:\n"
        + "\n".join(mismatches)
    )
    assert 0 < passed < compared


def test_more_than_twenty_steps_in_a_turn_force_terminates() -> None:
    category = next(category for category in MULTI_TURN if category.name == "multi-turn-base")
    task = next(task for task in tasks_for_env(category.env_id) if "GorillaFileSystem" in task.involved_classes)
    environment = BfclMultiTurnEnv(task, category)
    environment.reset(seed=0)
    for step in range(environment.max_steps_per_turn + 1):
        _, reward, terminated, _, info = environment.step(
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "pwd", "arguments": {}}]}
        )
        assert terminated == (step == environment.max_steps_per_turn)
    assert reward == 0.0 and info["score"]["metadata"]["error_type"] == "multi_turn:force_terminated"


def test_calls_are_data_never_code(tmp_path: Any) -> None:
    """Names must be backend methods and arguments JSON values; nothing is evaluated."""
    category = next(category for category in MULTI_TURN if category.name == "multi-turn-base")
    task = next(task for task in tasks_for_env(category.env_id) if "GorillaFileSystem" in task.involved_classes)
    environment = BfclMultiTurnEnv(task, category)
    environment.reset(seed=0)
    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}')"
    calls = [
        {"id": "a", "name": "cd", "arguments": {"folder": payload}},
        {"id": "b", "name": "__import__", "arguments": {"name": "os"}},
        {"id": "c", "name": "exit", "arguments": {}},
        {"id": "d", "name": "_load_scenario", "arguments": {"scenario": {}}},
        {"id": "e", "name": "mkdir", "arguments": {"dir_name": "x", "**kwargs": 1}},
        {"id": "f", "name": "echo", "arguments": {"content": "x" * 2_000_000, "file_name": "big.txt"}},
    ]
    observations, _, _, _, _ = environment.step({"role": "assistant", "content": "", "tool_calls": calls})
    contents = [message["content"] for message in observations]
    assert not marker.exists() and not os.path.exists(marker)
    assert "No such directory" in contents[0] or contents[0].startswith("{"), contents[0]
    assert contents[1] == "Error during execution: name '__import__' is not defined"
    assert contents[2] == "Error during execution: Function call exit is not allowed."
    assert contents[3] == "Error during execution: name '_load_scenario' is not defined"
    assert contents[4].startswith("Error during execution: invalid argument name")
    assert contents[5].startswith("Error during execution: a string of 2000000 characters is too long")
    environment.close()


def test_held_out_functions_arrive_at_their_turn() -> None:
    category = next(category for category in MULTI_TURN if category.name == "multi-turn-miss-func")
    task = tasks_for_env(category.env_id)[0]
    turn, functions = next(iter(task.held_out.items()))
    names = {function["name"] for function in functions}
    environment = BfclMultiTurnEnv(task, category)
    observation, _ = environment.reset(seed=0)
    assert not names & {tool["function"]["name"] for tool in environment.tools}
    for _ in range(turn):
        observation, *_ = environment.step({"role": "assistant", "content": "ok"})
    assert names <= {tool["function"]["name"] for tool in environment.tools}
    assert "I have updated some more functions" in observation[0]["content"]
    assert all(name in observation[0]["content"] for name in names)


def test_a_reply_that_does_not_decode_ends_the_turn_without_running_its_calls() -> None:
    """As in BFCL: bad JSON or non-object arguments end the turn; the chat stays well formed."""
    category = next(category for category in MULTI_TURN if category.name == "multi-turn-base")
    task = next(task for task in tasks_for_env(category.env_id) if "GorillaFileSystem" in task.involved_classes)
    environment = BfclMultiTurnEnv(task, category)
    environment.reset(seed=0)
    before = environment.backends.instances["GorillaFileSystem"]._current_dir.name
    calls = [
        {"id": "a", "name": "mkdir", "arguments": '{"dir_name": "new"'},
        {"id": "b", "name": "cd", "arguments": "[1]"},
    ]
    observations, _, terminated, _, info = environment.step({"role": "assistant", "content": "", "tool_calls": calls})
    assert [message["role"] for message in observations[:2]] == ["tool", "tool"]
    assert [message["tool_call_id"] for message in observations[:2]] == ["a", "b"]
    assert observations[2]["role"] == "user" and info["turn"] == 1 and not terminated
    assert environment._decoded[0] == []
    assert environment.backends.instances["GorillaFileSystem"]._current_dir.name == before
    observations, _, _, _, info = environment.step(
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "cd", "arguments": "[1]"}]}
    )
    assert observations[0]["tool_call_id"] == "c" and observations[0]["content"].startswith("Not executed")
    assert info["turn"] == 2 or info.get("score") is not None
    environment.close()
