"""Lying values against every code task: HumanEval's 164 problems and every pybugs/pyfunc task.

Each submission is a correct solution with one function made to lie (see
``rolloutgym_code._lying_values``: objects overriding ``__eq__``/``__hash__``/``__contains__``/
``__len__``/``__iter__``/``__bool__``/arithmetic, subclasses of ``int``/``float``/``str``/``list``/
``dict``, a proxy, and emptying the caller's lists, dicts and sets). Every one must score 0;
the correct solution must score 1. Both grading modes run: across the boundary (``bwrap``, the
built-in provider) and with the in-sandbox harness (a provider without ``start()``). Prints the
holes (none expected), the counts and the time per grading.

Run: ``python benchmarks/code_lying_values.py`` (``--only humaneval|tasks``, ``--limit N``
problems, ``--workers N``, ``--modes boundary,in-sandbox``).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rolloutgym_code._lying_values import humaneval_submissions, task_submissions
from rolloutgym_code.grading import GradingInput, grade_repository
from rolloutgym_code.humaneval import grade_program, humaneval_tasks
from rolloutgym_code.sandbox import get_sandbox
from rolloutgym_code.tasks import pybugs_tasks, pyfunc_tasks


class WithoutStart:
    """The bwrap provider without ``start()``: grading falls back to the in-sandbox harness."""

    def __init__(self, sandbox: Any) -> None:
        self._sandbox = sandbox
        self.name, self.python = "bwrap-in-sandbox", sandbox.python
        self.workdir, self.trusted_dir = sandbox.workdir, sandbox.trusted_dir

    def run(self, *arguments: Any, **keywords: Any) -> Any:
        return self._sandbox.run(*arguments, **keywords)


def jobs(options: argparse.Namespace) -> list[tuple[str, str, str, Any]]:
    """``(subject, variant, mode, grade)`` for every submission."""
    sandbox = get_sandbox("bwrap")
    providers = {"boundary": sandbox, "in-sandbox": WithoutStart(sandbox)}
    found: list[tuple[str, str, str, Any]] = []
    if options.only in (None, "humaneval"):
        for problem in humaneval_tasks()[: options.limit]:
            canonical = [("canonical", problem.prompt + problem.canonical_solution)]
            for variant, program in canonical + humaneval_submissions(problem):
                for mode in options.modes:
                    grade = lambda p=problem, s=program, m=mode: grade_program(p, s, providers[m])  # noqa: E731
                    found.append((problem.id, variant, mode, grade))
    if options.only in (None, "tasks"):
        for task in [*pybugs_tasks(), *pyfunc_tasks()][: options.limit]:
            fixed, submissions = task_submissions(task)
            for variant, files in [("canonical", fixed), *submissions]:
                grading = GradingInput(task.files, files, task.hidden_tests, task.visible_tests, task.expected_files)
                for mode in options.modes:
                    grade = lambda g=grading, m=mode: grade_repository(g, providers[m])  # noqa: E731
                    found.append((task.id, variant, mode, grade))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["humaneval", "tasks"], default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--modes", default="boundary,in-sandbox")
    options = parser.parse_args()
    options.modes = options.modes.split(",")
    work = jobs(options)
    started = time.perf_counter()
    with ThreadPoolExecutor(options.workers) as pool:
        values = list(pool.map(lambda job: job[3]().value, work))
    elapsed = time.perf_counter() - started
    holes = [(s, v, m) for (s, v, m, _), value in zip(work, values, strict=True) if v != "canonical" and value != 0]
    wrong = [(s, m) for (s, v, m, _), value in zip(work, values, strict=True) if v == "canonical" and value != 1]
    lying = sum(1 for _, v, _, _ in work if v != "canonical")
    subjects = len({s for s, _, _, _ in work})
    print(f"{subjects} subjects, {lying} lying submissions, {len(work) - lying} correct ones, modes {options.modes}")
    print(f"lying submissions scoring above 0: {len(holes)}; correct ones not scoring 1: {len(wrong)}")
    for hole in holes:
        print("  hole:", *hole)
    for miss in wrong:
        print("  correct solution failed:", *miss)
    print(
        f"{elapsed:.1f} s wall, {elapsed / len(work) * options.workers:.2f} s per grading ({options.workers} workers)"
    )
    return 1 if holes or wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
