"""ifeval/instructions-v0 (our prompts, if-verifiable 0.1.2's IFEval checkers) against the package's own evaluator.

The reference verdict is ``if_verifiable.evaluate_output_for_sample("ifeval", sample, reply)``
(the package's public API) on an ``IFEvalSample`` holding the task's prompt, checker ids and
arguments. A seeded sample here; ``benchmarks/ifeval_oracle.py`` checks every task.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest

if_verifiable = pytest.importorskip("if_verifiable")

from rolloutgym.registry import get_registry  # noqa: E402
from rolloutgym_benchmarks._ifeval_tasks import CHECKERS, FLOORED, NEEDS_NLTK_DATA, WORD_FLOOR  # noqa: E402
from rolloutgym_benchmarks.ifeval_envs import IFEvalTask, load_tasks, make_env  # noqa: E402
from rolloutgym_testing import EnvConformanceTests  # noqa: E402

ENV_ID = "ifeval/instructions-v0"


def package_strict(task: IFEvalTask, reply: str) -> bool:
    sample = if_verifiable.IFEvalSample(0, task.prompt, list(task.instruction_id_list), [dict(k) for k in task.kwargs])
    return if_verifiable.evaluate_output_for_sample("ifeval", sample, reply)[1].binary_strict == 1.0


def reward(task: IFEvalTask, reply: str) -> tuple[float, dict[str, Any]]:
    environment = make_env(task)
    environment.reset(seed=0)
    _, value, _, _, info = environment.step(reply)
    return value, info


def task_with(checker: str, index: int = 0) -> IFEvalTask:
    return [task for task in load_tasks() if task.instruction_id_list[0] == checker][index]


class TestIFEvalConformance(EnvConformanceTests):
    env_id = ENV_ID
    max_tasks = 4


def test_size_splits_source_and_licence_in_the_listing() -> None:
    registry = get_registry()
    tasks = registry.tasks(ENV_ID)
    assert len(tasks) == 460 and sum(task.split == "test" for task in tasks) == 92
    description = registry.resolve_env(ENV_ID).spec.description
    for part in ("460 tasks", "not IFEval's prompts", "source: if-verifiable 0.1.2", "licence Apache-2.0"):
        assert part in description
    # test topics (16-19) are not train topics: no request is in both splits
    requests = {
        split: {task.prompt.split(".")[0] for task in tasks if task.split == split} for split in ("train", "test")
    }
    assert not requests["train"] & requests["test"]


def test_every_packaged_ifeval_checker_is_served_or_excluded_with_its_reason() -> None:
    from if_verifiable.ifeval.instructions_registry import INSTRUCTION_CONFLICTS, INSTRUCTION_DICT

    assert set(INSTRUCTION_DICT) == set(CHECKERS) | set(NEEDS_NLTK_DATA)
    for name in FLOORED:  # the word floor added to stuffable checkers does not conflict with them
        assert WORD_FLOOR not in INSTRUCTION_CONFLICTS[name], name
    for name, kwargs in (
        ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "less than"}),
        ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "less than"}),
    ):
        checker = INSTRUCTION_DICT[name](name)
        checker.build_description(**kwargs)
        with pytest.raises(LookupError, match="punkt"):
            checker.check_following("One sentence. TWO sentences.")


def test_verdict_equals_the_packages_on_a_seeded_sample_of_gold_and_wrong_replies() -> None:
    """120 tasks (seeded) x oracle / near miss / another task's oracle / empty: 480 cases."""
    tasks = load_tasks()
    cases = agreed_ones = 0
    for index in random.Random(28).sample(range(len(tasks)), 120):
        task, other = tasks[index], tasks[(index + 7) % len(tasks)]
        for reply in (task.oracle, task.near_miss, other.oracle, ""):
            value, _ = reward(task, reply)
            assert (value == 1.0) == package_strict(task, reply), (task.id, reply)
            cases += 1
            agreed_ones += value == 1.0
        assert reward(task, task.oracle)[0] == 1.0 and reward(task, task.near_miss)[0] == 0.0, task.id
    assert cases == 480 and agreed_ones >= 120


def test_oracle_one_null_zero_through_the_engine(tmp_path: Any) -> None:
    from rolloutgym import run

    chosen = [task.id for task in random.Random(5).sample(load_tasks(), 12)]
    for policy, expected in (("oracle", 1.0), ("null", 0.0)):
        result = run(ENV_ID, policy=policy, tasks=chosen, out=tmp_path / f"{policy}.jsonl")
        scores = [trajectory.score.value for group in result.groups for trajectory in group.trajectories]
        assert len(scores) == 12 and set(scores) == {expected}, policy


def test_stuffing_hedges_thinking_and_the_answer_in_view() -> None:
    existence = task_with("keywords:existence")
    words = existence.kwargs[0]["keywords"]
    assert package_strict(IFEvalTask("bare", "", ("keywords:existence",), (existence.kwargs[0],)), " ".join(words))
    assert reward(existence, " ".join(words))[0] == 0.0  # the 15-word floor: a bare keyword list fails
    constrained = task_with("detectable_format:constrained_response")
    hedge = "My answer is yes. My answer is no."
    assert package_strict(constrained, hedge) and reward(constrained, hedge)[0] == 0.0
    assert reward(constrained, "My answer is no.")[0] == 1.0
    language = task_with("language:response_language")
    assert package_strict(language, "1234 5678") and reward(language, "1234 5678")[0] == 0.0
    title = task_with("detectable_format:title")
    assert reward(title, f"<think>{title.oracle}</think>")[0] == 0.0  # only thinking, no reply
    assert reward(title, f"<think>plan</think>{title.oracle}")[0] == 1.0
    value, info = reward(title, title.near_miss)
    assert value == 0.0 and "detectable_format:title" in info["score"]["feedback"]
    observation, info = make_env(title).reset(seed=0)
    assert title.oracle not in json.dumps([observation, info])
    assert set(info) == {"task_id", "instructions", "reward", "trainable"}


def test_listing_imports_no_checker_package() -> None:
    code = (
        "import sys; from rolloutgym.registry import get_registry; r = get_registry(); r.envs(); "
        f"r.tasks('{ENV_ID}'); "
        "assert not [m for m in sys.modules if m.startswith(('if_verifiable', 'langdetect', 'nltk'))], 'imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


_HIDDEN = """
import importlib.metadata, sys
real_version = importlib.metadata.version
def version(name):
    if name == 'if-verifiable':
        raise importlib.metadata.PackageNotFoundError(name)
    return real_version(name)
importlib.metadata.version = version
sys.modules['if_verifiable'] = None
from rolloutgym.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_the_extra_run_says_what_to_install(tmp_path: Any) -> None:
    command = [sys.executable, "-c", _HIDDEN, "run", ENV_ID, "--limit", "1", "--out", str(tmp_path / "r.jsonl")]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    message = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0
    assert "pip install if-verifiable==0.1.2" in message and "Traceback" not in message
