"""TRL's ORS integration (``trl.experimental.openreward``, TRL 1.16) against ``rolloutgym serve`` (issue 45).

``OpenRewardSpec(URL)`` is what a TRL user hands to ``GRPOTrainer``: ``train_dataset``,
``environment_factory`` and ``reward_funcs``. Here the three are used as the trainer uses them
(dataset rows, one factory-made environment per rollout with a Python method per served tool,
``reset(task_index=...)``, tool calls, the reward function over the finished environments),
without a model: a scripted binary search stands in for the policy, against a real server
process on a loopback port. TRL drives the official ``openreward`` SDK, whose client adds a
``sessions.`` subdomain to a base URL (its platform's routing); ``OPENREWARD_SESSION_URL``, the
SDK's own override, points it at the server, and ``env_name`` names the served env.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

pytest.importorskip("openreward")
pytest.importorskip("datasets")
trl_openreward = pytest.importorskip("trl.experimental.openreward")

from rolloutgym.registry import get_registry  # noqa: E402
from rolloutgym.serve import ServerProcess  # noqa: E402

GUESS = "toy/guess-v0"
TOKEN = "s3cret"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    with ServerProcess([GUESS], token=TOKEN) as process:
        yield process


@pytest.fixture
def spec(server: ServerProcess, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENREWARD_SESSION_URL", server.base_url)
    return trl_openreward.OpenRewardSpec(server.base_url, api_key=TOKEN, env_name=GUESS, num_tasks=4)


def _play(environment, task_index: int) -> None:
    prompt = environment.reset(task_index=task_index)
    low, high = (int(value) for value in re.search(r"between (\d+) and (\d+)", prompt).groups())
    for _ in range(10):
        middle = (low + high) // 2
        output = environment.guess(number=middle)
        if environment.finished:
            return
        low, high = (middle + 1, high) if "higher" in output else (low, middle - 1)


def test_the_dataset_is_the_envs_train_tasks(spec) -> None:
    rows = spec.train_dataset
    train = [task for task in get_registry().tasks(GUESS) if task.split == "train"][:4]
    assert rows["task_index"] == [0, 1, 2, 3]
    assert rows["id"] == [task.id for task in train]
    assert rows["prompt"][0] == [{"role": "user", "content": ""}]


def test_grpo_style_rollouts_are_rewarded_by_the_served_env(spec) -> None:
    won, unfinished = spec.environment_factory(), spec.environment_factory()
    assert callable(won.guess) and callable(won.answer)  # one method per served tool
    _play(won, task_index=3)
    unfinished.reset(task_index=3)
    unfinished.guess(number=-1)  # out of range: a step without the reward
    assert won.finished and won.rewards[-1] == 1.0 and all(reward == 0.0 for reward in won.rewards[:-1])
    assert won.metadata[-1]["info"]["score"]["value"] == 1.0
    assert not unfinished.finished
    assert spec.reward_funcs(environments=[won, unfinished]) == [1.0, 0.0]
    for environment in (won, unfinished):
        environment._close()
