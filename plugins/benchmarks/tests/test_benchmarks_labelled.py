"""The labelled set of realistic model outputs (issue 17, item 7).

``data/math_outputs_labelled.jsonl`` holds 250+ model-style responses with the reference
answer and whether a right grader gives full marks (``benchmarks/math_verify_compare.py``
prints the same accuracy next to HF math-verify's). Every hedge -- different values offered
in several boxes or joined by "or" -- must score 0, whatever else the grader gets right.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rolloutgym_benchmarks import grade_math

CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "math_outputs_labelled.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]


def _grade(case: dict[str, Any]) -> float:
    return grade_math(case["response"], case["expected"], kind=case["kind"]).value


def test_the_set_is_large_and_varied() -> None:
    assert len(CASES) >= 150
    assert sum(case["correct"] for case in CASES) >= 100
    assert sum(not case["correct"] for case in CASES) >= 40
    assert sum("hedge" in case["note"] for case in CASES) >= 10
    assert {case["kind"] for case in CASES} == {"gsm8k", "aime"}


def test_accuracy_on_the_labelled_set() -> None:
    misses = [case["note"] for case in CASES if (_grade(case) == 1.0) != case["correct"]]
    accuracy = 1 - len(misses) / len(CASES)
    assert accuracy >= 0.95, f"accuracy {accuracy:.3f}; misses: {misses}"


@pytest.mark.parametrize("case", [case for case in CASES if "hedge" in case["note"]], ids=lambda case: case["note"])
def test_every_hedge_scores_zero(case: dict[str, Any]) -> None:
    assert not case["correct"]
    assert _grade(case) == 0.0
    # ... even when the reference is each of the offered values in turn.
    from rolloutgym_benchmarks._numbers import find_numbers

    tokens, _ = find_numbers(case["response"].replace("\\boxed", " "))
    for token in tokens:
        assert grade_math(case["response"], str(token.value), kind=case["kind"]).value == 0.0, token.value


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (r"It could be \boxed{16} or \boxed{18}.", "18"),
        (r"\boxed{16}, \boxed{17}, \boxed{18}", "17"),
        (r"\boxed{16} \boxed{18} \boxed{16}", "16"),
        (r"The answer is 16 or 18.", "16"),
        (r"Final answer: either 16 or 18", "18"),
        (r"\boxed{16 \text{ or } 18}", "18"),
        (r"\boxed{16, 18}", "16"),
        (r"#### 16 or 18", "18"),
    ],
)
def test_hedges_score_zero_and_say_why(response: str, expected: str) -> None:
    score = grade_math(response, expected)
    assert score.value == 0.0, score.feedback
    assert score.feedback


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (r"The answer is $\boxed{}$. The answer is 18.", "18"),
        (r"\boxed{ } \boxed{{}} Final answer: 18", "18"),
        (r"\boxed{{310}}", "310"),
        (r"\boxed{{{310}}}", "310"),
        (r"\boxed{m+n=37}", "37"),
        (r"\boxed{a+b+c = 12 + 25 = 37}", "37"),
        (r"\boxed{3 \times 6 = 18}", "18"),
        (r"\boxed{2\cdot 56}", "112"),
        (r"\boxed{(2+3)\cdot 4^2}", "80"),
        (r"\boxed{24 \text{ m}^2}", "24"),
        (r"\boxed{24\,\mathrm{cm}^{2}}", "24"),
        (r"\boxed{24 \text{ square feet}}", "24"),
        (r"\boxed{18} and \boxed{18.0} and \boxed{\$18}", "18"),
        (r"\boxed{\text{eighteen}}", "18"),
        (r"\boxed{x \approx 3.5}", "3.5"),
        (r"\boxed{\sqrt{144}}", "12"),
    ],
)
def test_forms_that_used_to_be_missed(response: str, expected: str) -> None:
    score = grade_math(response, expected)
    assert score.value == 1.0, score.feedback


@pytest.mark.parametrize(
    "response",
    [
        r"\boxed{9^9^9^9^9}",
        r"\boxed{" + "(" * 5000 + "1" + ")" * 5000 + "}",
        r"\boxed{" + "1+" * 10000 + "1}",
        r"\boxed{10^{100000}}",
        r"\boxed{1/0}",
        r"\boxed{\sqrt{-4}}",
        "\\boxed{" + "{" * 3000 + "5" + "}" * 3000 + "}",
        "The answer is " + "one " * 5000,
    ],
)
def test_hostile_arithmetic_is_refused_cheaply(response: str) -> None:
    score = grade_math(response, "5")
    assert score.value in (0.0, 1.0)
