"""Math answer grading: answers graded per second, rolloutgym-benchmarks vs rolloutlib 0.2.0.

Both graders run on the same inputs in the same process: a mix of GSM8K-style responses
built from the shipped sample problems (reference solutions, boxed answers, "the answer is",
wrong answers), then the golden table of plugins/benchmarks/tests/data/golden_math.jsonl,
whose accuracy is printed for both graders. rolloutlib is optional: without it (``pip install
rolloutlib==0.2.0``, or ``hatch run bench:python benchmarks/math_grading.py``) only our figures print.

    python benchmarks/math_grading.py [--repeat 40]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rolloutgym_benchmarks import grade_gsm8k, grade_math, gsm8k_examples

GOLDEN = Path(__file__).resolve().parent.parent / "plugins" / "benchmarks" / "tests" / "data" / "golden_math.jsonl"


def load_rolloutlib() -> tuple[Any, Any, str]:
    """rolloutlib 0.2.0's graders, or (None, None, why not)."""
    try:
        from importlib.metadata import version

        from rolloutlib.evals.benchmarks import grade_aime as theirs_aime
        from rolloutlib.evals.benchmarks import grade_gsm8k as theirs_gsm8k
    except Exception as error:  # its message spaces break on some Pythons; report whatever happened
        return None, None, f"{error.__class__.__name__}: {error}"
    return theirs_gsm8k, theirs_aime, version("rolloutlib")


def typical_inputs() -> list[tuple[str, str]]:
    """(response, expected) pairs shaped like real model output on GSM8K."""
    pairs = []
    for example in gsm8k_examples():
        answer = example.answer.rsplit("####", 1)[-1].strip()
        solution = re.sub(r"<<[^<>]*>>", "", example.answer)
        reasoning = solution.rsplit("####", 1)[0]
        pairs += [
            (solution, example.answer),
            (f"{reasoning}\nThe answer is {answer}.", example.answer),
            (f"{reasoning}\nSo the final answer is $\\boxed{{{answer}}}$.", example.answer),
            (f"{reasoning}\n**{int(answer) + 1}**", example.answer),
            (f"Let me think.\n{reasoning}\nTherefore {answer} in total.", example.answer),
        ]
    return pairs


def _seconds(grade: Callable[[str, str], Any], pairs: list[tuple[str, str]]) -> float:
    start = time.perf_counter()
    for response, expected in pairs:
        grade(response, expected)
    return time.perf_counter() - start


def rates(graders: list[Callable[[str, str], Any]], pairs: list[tuple[str, str]], repeat: int) -> list[float]:
    """Answers graded per second for each grader: best of ``repeat`` short rounds, the graders
    interleaved within each round so that load from other processes hits both alike."""
    best = [float("inf")] * len(graders)
    for _ in range(repeat):
        for index, grade in enumerate(graders):
            best[index] = min(best[index], _seconds(grade, pairs))
    return [len(pairs) / seconds for seconds in best]


def golden_accuracy(grade_for: Callable[[dict[str, Any]], Any]) -> tuple[int, int, list[str]]:
    cases = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]
    right, misses = 0, []
    for case in cases:
        try:
            score = grade_for(case)
            passed = (score.value == 1.0) == case["correct"]
        except Exception as error:
            passed = False
            case = {**case, "note": f"{case['note']} (raised {error.__class__.__name__})"}
        right += passed
        if not passed:
            misses.append(case["note"])
    return right, len(cases), misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    arguments = parser.parse_args()
    pairs = typical_inputs() * 2
    theirs_gsm8k, theirs_aime, theirs_version = load_rolloutlib()
    graders = [grade_gsm8k] if theirs_gsm8k is None else [grade_gsm8k, theirs_gsm8k]
    measured = rates(graders, pairs, arguments.repeat)
    ours_rate = measured[0]
    print(f"inputs: {len(pairs)} GSM8K-style responses per round, best of {arguments.repeat} interleaved rounds")
    print(f"rolloutgym-benchmarks grade_gsm8k: {ours_rate:,.0f} answers/s")
    ours_right, total, ours_misses = golden_accuracy(
        lambda case: grade_math(
            case["response"],
            case["expected"],
            kind=case["kind"],
            **{k: case[k] for k in ("boxed", "symbolic", "max_boxed_answers") if k in case},
        )
    )
    if theirs_gsm8k is None:
        print(f"rolloutlib not importable ({theirs_version}); install rolloutlib==0.2.0 for the comparison")
    else:
        theirs_rate = measured[1]
        print(f"rolloutlib {theirs_version} grade_gsm8k: {theirs_rate:,.0f} answers/s")
        print(f"speed ratio (ours / rolloutlib): {ours_rate / theirs_rate:.2f}x")
        theirs_right, _, theirs_misses = golden_accuracy(
            lambda case: (theirs_aime if case["kind"] == "aime" else theirs_gsm8k)(case["response"], case["expected"])
        )
        print(
            f"golden table accuracy, rolloutlib {theirs_version}: {theirs_right}/{total} ({theirs_right / total:.1%})"
        )
        print("  rolloutlib misses: " + "; ".join(theirs_misses))
    print(f"golden table accuracy, rolloutgym-benchmarks: {ours_right}/{total} ({ours_right / total:.1%})")
    if ours_misses:
        print("  our misses: " + "; ".join(ours_misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
