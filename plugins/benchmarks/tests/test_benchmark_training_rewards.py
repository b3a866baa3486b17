"""IFEval's score and a training reward one fixed reply cannot earn; AgentDojo's odd tool_calls (issue 50).

IFEval checks form, not content: a fixed reply unrelated to the request passes every task whose
form it meets (112 of 460 in the review). The env's score stays IFEval's (``reward="benchmark"``);
the training verdict (``reward="training"``) also wants the reply to be about its own request, so a
fixed reply passes the tasks of one topic at most. AgentDojo: a ``tool_calls`` that is not a list
raised ``TypeError`` (an unscored episode a policy could choose); it is now an invalid action.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

TOPICS = json.loads(
    resources.files("rolloutgym_benchmarks").joinpath("data/ifeval_topics.json").read_text(encoding="utf-8")
)["topics"]
CONSTANT_REPLIES = {
    "lowercase and no commas": "here is my reply and it is written in lowercase with no commas at all so it fits "
    "many of the forms a request can ask for and it goes on for a good number of words here",
    "every topic's own text": " ".join(topic["text"] for topic in TOPICS),
    "every topic's title": " ".join(topic["title"] for topic in TOPICS) + " P.S. done",
    "a title and sections": "<<A Reply>>\n\nSECTION 1\nfirst part of the reply with words\n\n***\n\nSECTION 2\n"
    "second part of the reply with more words in it\n\nP.S. thanks",
    "a yes": "My answer is yes.",
}


def test_one_fixed_reply_cannot_earn_the_training_reward_across_requests() -> None:
    pytest.importorskip("if_verifiable")
    from rolloutgym_benchmarks.ifeval_envs import grade, load_tasks, training_score

    tasks = load_tasks()
    for name, reply in CONSTANT_REPLIES.items():
        benchmark = [task for task in tasks if grade(task, reply).value == 1.0]
        training = [task for task in benchmark if training_score(task, grade(task, reply), reply, "training").value]
        assert len({task.topic for task in training}) <= 1, (name, [task.id for task in training])
        assert len(training) <= len(tasks) // len(TOPICS), name
    assert any(
        sum(grade(task, reply).value for task in tasks) >= 40 for reply in CONSTANT_REPLIES.values()
    )  # the hole is real under the benchmark's verdict


def test_the_oracle_earns_both_rewards_on_every_trainable_task_and_untrainable_ones_say_why() -> None:
    pytest.importorskip("if_verifiable")
    from rolloutgym_benchmarks.ifeval_envs import load_tasks, make_env

    untrainable = [task for task in load_tasks() if task.untrainable]
    assert len(untrainable) == 2 * len(TOPICS)
    for task in [*load_tasks()[::7], *untrainable[:2]]:
        for reward in ("benchmark", "training"):
            env = make_env(task, reward=reward)
            _, info = env.reset(seed=0)
            assert info["trainable"] is (task.untrainable is None) and info["reward"] == reward
            _, value, terminated, _, info = env.step(env.oracle_action())
            components = info["score"]["components"]
            assert terminated and components["benchmark"]["value"] == 1.0, task.id
            expected = 1.0 if reward == "benchmark" or task.untrainable is None else 0.0
            assert value == expected == (components["training"]["value"] if reward == "training" else value), task.id
            if task.untrainable:
                assert "untrainable" in info["score"]["metadata"]["training_check"]


def test_an_off_topic_reply_in_the_right_form_earns_only_the_benchmark_score() -> None:
    pytest.importorskip("if_verifiable")
    from rolloutgym_benchmarks.ifeval_envs import load_tasks, make_env

    task = next(task for task in load_tasks() if task.id.endswith("english_lowercase") and task.topic == 0)
    other = TOPICS[1]["text"].lower().replace(",", "")  # about tea, in the form the cat note asks for
    scores = {}
    for reward in ("benchmark", "training"):
        env = make_env(task, reward=reward)
        env.reset(seed=0)
        scores[reward] = env.step(other)[1]
    assert scores == {"benchmark": 1.0, "training": 0.0}


@pytest.mark.parametrize("tool_calls", [5, 3.5, True, "get_balance", {"not": "a call"}])
def test_agentdojo_tool_calls_that_are_not_a_list_are_an_invalid_action(tool_calls: Any) -> None:
    pytest.importorskip("agentdojo")
    from rolloutgym_benchmarks.agentdojo_envs import load_tasks, make_env

    env = make_env(load_tasks("banking")[0])
    env.reset(seed=0)
    observations, reward, terminated, truncated, info = env.step(
        {"role": "assistant", "content": "", "tool_calls": tool_calls}
    )
    assert not terminated and not truncated and reward == 0.0
    assert "Not executed" in observations[0]["content"] or observations[0]["role"] == "tool"
    _, reward, terminated, _, info = env.step(env.oracle_action())  # the episode goes on and is scored
    while not terminated:
        _, reward, terminated, _, info = env.step(env.oracle_action())
    assert reward == 1.0, info["score"]["feedback"]


def test_agentdojo_arguments_past_the_bounds_are_not_run() -> None:
    pytest.importorskip("agentdojo")
    from rolloutgym_benchmarks.agentdojo_envs import load_tasks, make_env

    deep: Any = "x"
    for _ in range(500):
        deep = {"a": deep}
    env = make_env(load_tasks("banking")[0])
    env.reset(seed=0)
    name = env.tools[0]["function"]["name"]
    for arguments in ({"n": deep}, "[" * 5000 + "]" * 5000, {"n": "A" * 1_000_000}, {"n": list(range(20_000))}):
        call = {"id": "h", "name": name, "arguments": arguments}
        observations, reward, terminated, _, _ = env.step({"role": "assistant", "content": "", "tool_calls": [call]})
        assert not terminated and observations[0]["content"].startswith("Not executed: the arguments")
    assert env.trace == []  # none reached AgentDojo's runtime
    _, reward, terminated, _, info = env.step(env.oracle_action())
    while not terminated:
        _, reward, terminated, _, info = env.step(env.oracle_action())
    assert reward == 1.0, info["score"]["feedback"]
