"""tau2: the benchmark's score and a training reward that its shortcuts do not earn; bounded tool arguments.

Issue 50 (classes 6 and 8). tau2's own verdict passes ``Done. ###STOP###`` after the lookups on
tasks whose reward basis holds for the untouched world (refusals), and passes pasting every tool
result to the user on tasks that ask the agent to tell something. The env keeps tau2's verdict as
its score by default (``reward="benchmark"``) and reports a training verdict beside it (the step
reward with ``reward="training"``): 0 on untrainable tasks and on dumps. Tool arguments nested too
deep or too large are refused before tau2 keeps them (its evaluator deep-copied them at the end
and raised ``RecursionError``: an unscored episode).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("tau2")
pytest.importorskip("rolloutgym_workflow")

from rolloutgym_benchmarks._tool_bounds import MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH, parse_arguments  # noqa: E402
from rolloutgym_benchmarks.tau2_crosscheck import gold, writes  # noqa: E402
from rolloutgym_benchmarks.tau2_envs import STOP, make_env  # noqa: E402
from rolloutgym_benchmarks.tau2_tasks import load_tasks  # noqa: E402


def _task(domain: str, task_id: str) -> Any:
    return next(task for task in load_tasks(domain) if task.id == f"{domain}/{task_id}")


def _call(name: str, arguments: Any, call_id: str = "c") -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _lookups(env: Any) -> list[dict[str, Any]]:
    changing = writes(env)
    return [
        _call(action.name, dict(action.arguments), f"g{index}")
        for index, action in enumerate(gold(env))
        if action.requestor == "assistant" and action.name not in changing
    ]


def _play(env: Any, replies: list[dict[str, Any]]) -> tuple[float, dict[str, Any], list[Any]]:
    env.reset(seed=0)
    seen: list[Any] = []
    for reply in replies:
        observations, reward, terminated, truncated, info = env.step(reply)
        seen += observations
        if terminated or truncated:
            return reward, info, seen
    raise AssertionError("the episode did not end")


def test_ending_after_the_lookups_keeps_the_benchmark_score_but_earns_no_training_reward() -> None:
    task = _task("airline", "4")  # a refusal: the untouched world is the right end state
    for reward_kind in ("benchmark", "training"):
        env = make_env(task, reward=reward_kind)
        assert env.untrainable and "untouched world" in env.untrainable
        reward, info, _ = _play(env, [*_lookups(env), {"role": "assistant", "content": f"Done. {STOP}"}])
        components = info["score"]["components"]
        assert components["benchmark"]["value"] == 1.0 and components["training"]["value"] == 0.0
        assert info["score"]["metadata"]["trainable"] is False
        assert reward == (1.0 if reward_kind == "benchmark" else 0.0)
    assert env.reset(seed=0)[1]["trainable"] is False


def test_pasting_every_tool_result_is_not_telling_the_user() -> None:
    env = make_env(_task("airline", "3"), reward="training")  # must tell the user "4"
    assert env.untrainable is None
    env.reset(seed=0)
    results = []
    for reply in _lookups(env):
        observations, *_ = env.step(reply)
        results += [observation["content"] for observation in observations]
    _, reward, terminated, _, info = env.step({"role": "assistant", "content": "\n".join(results) + f" {STOP}"})
    assert terminated and info["score"]["components"]["benchmark"]["value"] == 1.0  # tau2 passes the dump
    assert reward == 0.0 and "verbatim" in info["score"]["metadata"]["training_check"]
    reward, info, _ = _play(env, [*_lookups(env), {"role": "assistant", "content": f"You have 4 of them. {STOP}"}])
    assert reward == 1.0 and info["score"]["components"]["training"]["value"] == 1.0


def test_an_unknown_reward_kind_is_named() -> None:
    from rolloutgym_protocol.errors import ConfigError

    with pytest.raises(ConfigError, match="reward must be"):
        make_env(_task("airline", "3"), reward="both")


def _nested(depth: int, kind: str) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value} if kind == "dict" else [value]
    return value


HOSTILE_ARGUMENTS = {
    "a dict 500 deep": {"reservation_id": _nested(500, "dict")},
    "a list 500 deep": {"reservation_id": _nested(500, "list")},
    "JSON text 5,000 deep": '{"reservation_id": ' + "[" * 5000 + "]" * 5000 + "}",
    "JSON text 200,000 long": json.dumps({"reservation_id": "A" * 200_000}),
    "a string of 1,000,000 characters": {"reservation_id": "A" * 1_000_000},
    "20,000 values": {"reservation_id": list(range(20_000))},
    "one level too deep": {"reservation_id": _nested(MAX_ARGUMENT_DEPTH, "dict")},
    "a key that is not a string": {1: "x"},
}


def test_argument_bounds_name_the_problem() -> None:
    for name, arguments in HOSTILE_ARGUMENTS.items():
        value, problem = parse_arguments(arguments)
        assert value is None and problem, name
    fine = {"reservation_id": "ABC123", "passengers": [{"first_name": "A", "dob": "1990-01-01"}] * 5}
    assert parse_arguments(fine) == (fine, None)
    assert parse_arguments(json.dumps(fine)) == (fine, None)
    assert parse_arguments({"note": "x" * (MAX_ARGUMENT_CHARS - 10)})[1] is None


@pytest.mark.parametrize("domain, task_id", [("airline", "3"), ("retail", "24")])
def test_hostile_arguments_are_refused_and_the_episode_is_scored(domain: str, task_id: str) -> None:
    env = make_env(_task(domain, task_id))
    env.reset(seed=0)
    tool = env.tools[0]["function"]["name"]
    for position, arguments in enumerate(HOSTILE_ARGUMENTS.values()):
        observations, reward, terminated, _, _ = env.step(_call(tool, arguments, f"h{position}"))
        assert not terminated and len(observations) == 1
        assert observations[0]["content"].startswith("Error: ") and len(observations[0]["content"]) < 300
    assert not [m for m in env.trajectory if getattr(m, "tool_calls", None)]  # none was kept
    while True:  # the oracle then finishes the task: the episode is scored, not an env error
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        if terminated or truncated:
            break
    assert reward == 1.0, info["score"]["feedback"]
