"""Math grading: accuracy on a labelled set of realistic model outputs and speed, vs HF math-verify.

The labelled set is ``plugins/benchmarks/tests/data/math_outputs_labelled.jsonl``: model-style
responses (LaTeX fractions, decimals, percentages, thousands separators, negatives, units,
mixed numbers, number words, equations, arithmetic, "final answer" phrases, empty boxes,
the same value boxed twice, and hedges over different values, which must score 0), each with
the reference answer and whether a right grader gives it full marks. Both graders run on the
same items in the same process; speed is answers graded per second, best of ``--repeat``
interleaved rounds. math-verify is optional: ``pip install 'rolloutgym-benchmarks[compare]'``
(without it only our figures print).

    python benchmarks/math_verify_compare.py [--repeat 5] [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rolloutgym_benchmarks import grade_math

LABELLED = (
    Path(__file__).resolve().parent.parent / "plugins" / "benchmarks" / "tests" / "data" / "math_outputs_labelled.jsonl"
)


def load_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]


def ours(case: dict[str, Any]) -> bool:
    return grade_math(case["response"], case["expected"], kind=case["kind"]).value == 1.0


def load_math_verify() -> Callable[[dict[str, Any]], bool] | None:
    try:
        from math_verify import parse, verify
    except ImportError:
        return None

    def theirs(case: dict[str, Any]) -> bool:
        try:
            gold = parse(f"${case['expected']}$")
            answer = parse(case["response"])
            return bool(verify(gold, answer))
        except Exception:  # a grader that raises gives no credit
            return False

    return theirs


def accuracy(grade: Callable[[dict[str, Any]], bool], cases: list[dict[str, Any]]) -> tuple[float, list[str]]:
    misses = [case["note"] for case in cases if grade(case) != case["correct"]]
    return 1 - len(misses) / len(cases), misses


def best_rate(grade: Callable[[dict[str, Any]], bool], cases: list[dict[str, Any]], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for case in cases:
            grade(case)
        best = min(best, time.perf_counter() - start)
    return len(cases) / best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--misses", action="store_true", help="list the items each grader gets wrong")
    arguments = parser.parse_args()
    cases = load_cases()
    hedges = [case for case in cases if "hedge" in case["note"]]
    print(f"labelled set: {len(cases)} items ({sum(c['correct'] for c in cases)} right answers, {len(hedges)} hedges)")
    ours_accuracy, ours_misses = accuracy(ours, cases)
    theirs = load_math_verify()
    rates = {"ours": 0.0, "theirs": 0.0}
    for _ in range(arguments.repeat):  # interleaved so that load from other processes hits both alike
        rates["ours"] = max(rates["ours"], best_rate(ours, cases, 1))
        if theirs is not None:
            rates["theirs"] = max(rates["theirs"], best_rate(theirs, cases, 1))
    print(f"rolloutgym-benchmarks grade_math: accuracy {ours_accuracy:.3f}, {rates['ours']:,.0f} answers/s")
    if arguments.misses and ours_misses:
        print("  misses: " + "; ".join(ours_misses))
    if theirs is None:
        print("math-verify is not installed (pip install 'rolloutgym-benchmarks[compare]'); no comparison")
        return 0
    from importlib.metadata import version

    theirs_accuracy, theirs_misses = accuracy(theirs, cases)
    print(f"math-verify {version('math-verify')}: accuracy {theirs_accuracy:.3f}, {rates['theirs']:,.0f} answers/s")
    if arguments.misses and theirs_misses:
        print("  misses: " + "; ".join(theirs_misses))
    hedges_passed = sum(theirs(case) for case in hedges)
    print(f"  hedges math-verify gives full marks: {hedges_passed}/{len(hedges)}")
    print(f"speed ratio (ours / math-verify): {rates['ours'] / rates['theirs']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
