"""The env conformance kit on ``trl/digits-v0`` and ``trl/sums-v0``, and golden fixtures for their graders."""

from __future__ import annotations

import subprocess
import sys

import pytest
from rolloutgym_testing import EnvConformanceTests
from rolloutgym_trl.envs import DigitsEnv, SumsEnv, SumsTask, digit_share, digits_tasks, sums_tasks


class TestDigitsConformance(EnvConformanceTests):
    env_id = "trl/digits-v0"


class TestSumsConformance(EnvConformanceTests):
    env_id = "trl/sums-v0"


@pytest.mark.parametrize(
    ("reply", "passed"),
    [
        ("47", True),  # the sum alone
        ("38 + 9 = 47", True),  # work shown with the question's numbers
        (" The answer is 47.\n", True),  # words around it
        ("47 or 48", False),  # hedged: another number offered
        ("48", False),  # near miss
        ("", False),  # empty
        ("forty-seven", False),  # no integer
    ],
)
def test_sums_grader(reply: str, passed: bool) -> None:
    environment = SumsEnv(SumsTask("sums-x", "test", 38, 9))
    environment.reset(seed=0)
    score = environment.evaluate(reply)
    assert score.value == float(passed)
    if not passed:
        assert score.feedback


def test_sums_splits_and_difficulties() -> None:
    tasks = sums_tasks()
    assert [task.split for task in tasks].count("test") == 100 and len(tasks) == 300
    digits = [(len(str(task.a)), len(str(task.b))) for task in tasks if task.split == "test"]
    assert sorted(set(digits)) == [(1, 1), (2, 1), (2, 2)] and digits.count((2, 2)) in range(30, 37)


@pytest.mark.parametrize(
    ("reply", "value", "passed"),
    [
        (" 2024\n", 1.0, True),  # right answer in an unusual form: surrounding whitespace
        ("2024.", 0.8, False),  # near miss: a trailing full stop
        ("", 0.0, False),  # empty answer
        ("   ", 0.0, False),  # whitespace only
        ("The answer is 12", 2 / 13, False),  # words around the number
    ],
)
def test_digits_grader(reply: str, value: float, passed: bool) -> None:
    environment = DigitsEnv(digits_tasks()[0])
    environment.reset(seed=0)
    score = environment.evaluate(reply)
    assert score.value == pytest.approx(value)
    assert score.components["digits_only"].value == float(passed)
    if not passed:
        assert score.feedback  # says what to change


def test_near_miss_feedback_names_the_extra_characters() -> None:
    environment = DigitsEnv(digits_tasks()[0])
    environment.reset(seed=0)
    assert "'.'" in environment.evaluate("2024.").feedback


def test_digit_share_counts_non_space_characters() -> None:
    assert digit_share("12 ab") == 0.5
    assert digit_share("٣") == 0.0  # only ASCII digits count


def test_splits_are_in_the_data() -> None:
    splits = [task.split for task in digits_tasks()]
    assert (splits.count("train"), splits.count("dev"), splits.count("test")) == (24, 8, 8)


def test_plugin_module_imports_nothing_heavy() -> None:
    """'rolloutgym list' imports plugin.py (and the commands hook): no trl, torch or transformers."""
    heavy = ["trl", "torch", "transformers", "datasets", "peft", "accelerate"]
    code = (
        "import sys, typer, rolloutgym_trl.plugin as plugin; plugin.rolloutgym_envs(); "
        "plugin.rolloutgym_commands(typer.Typer()); "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
