"""The golden table: right answers in unusual forms pass, look-alikes and exploits score 0.

The cases live in ``data/golden_math.jsonl`` (also read by ``benchmarks/math_grading.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rolloutgym_benchmarks import grade_math

CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "golden_math.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


def test_table_is_large_and_balanced() -> None:
    assert len(CASES) >= 100
    assert sum(case["correct"] for case in CASES) >= 40
    assert sum(not case["correct"] for case in CASES) >= 40
    assert {case["kind"] for case in CASES} == {"gsm8k", "aime"}


def _grade(case: dict[str, Any]) -> Any:
    options = {key: case[key] for key in ("boxed", "symbolic", "max_boxed_answers") if key in case}
    return grade_math(case["response"], case["expected"], kind=case["kind"], **options)


@pytest.mark.parametrize("case", CASES, ids=[f"{index:03d}-{case['note']}" for index, case in enumerate(CASES)])
def test_golden_case(case: dict[str, Any]) -> None:
    score = _grade(case)
    assert score.value == (1.0 if case["correct"] else 0.0), f"{case['note']}: {score.feedback} {score.metadata}"
    assert set(score.components) == {"correct", "formatted"}
    assert score.components["correct"].value == score.value
    assert score.feedback and score.components["correct"].feedback and score.components["formatted"].feedback
    assert {"expected", "extracted", "rule"} <= set(score.metadata)
    json.dumps(score.to_dict())  # metadata stays JSON-ready (no Fractions)
    if not case["correct"]:
        assert "expected" in score.feedback, "the feedback of a failure names what was expected"
