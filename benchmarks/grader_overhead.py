"""A catalogue env's grading against its benchmark's own evaluator, on the same replies.

For each reasoning-gym generator named (``--generators``), ``--items`` train problems: the
gold reply and a wrong one (another problem's gold), each graded ``--repeats`` times by

* the env: ``reset`` then ``step(reply)`` of ``rg/mixture-v0`` with ``generators=NAME``
  (extraction, the package's ``score_answer``, the hedge checks, the ``Score`` record), and
* the package alone: ``score_answer(extract_answer(reply), entry)`` on the same problem.

Prints CPU µs per reply for both and the ratio (target: <= 1.5x), per generator and overall,
with the load average. (IFEval's figure is printed by ``ifeval_oracle.py``.)

    python benchmarks/grader_overhead.py [--generators chain_sum,gcd,basic_arithmetic] [--items 20]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any


def cpu_per_call(function: Any, replies: list[Any], repeats: int) -> float:
    """Best-of-``repeats`` CPU seconds per reply."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for reply in replies:
            function(reply)
        best = min(best, (time.process_time() - started) / len(replies))
    return best


def measure(name: str, items: int, repeats: int) -> tuple[float, float]:
    from reasoning_gym.utils import extract_answer
    from rolloutgym_benchmarks.rg import make_env, oracle_answer, rg_tasks

    tasks = rg_tasks("train", items + 1)
    envs = [make_env(task, family="mixture", generators=name) for task in tasks]
    cases = []
    for index in range(items):
        environment, other = envs[index], envs[index + 1]
        for answer in (oracle_answer(name, environment.entry), oracle_answer(name, other.entry)):
            cases.append((environment, f"<answer>{answer}</answer>"))

    def ours(case: tuple[Any, str]) -> None:
        environment, reply = case
        environment.reset(seed=0)
        environment.step(reply)

    def theirs(case: tuple[Any, str]) -> None:
        environment, reply = case
        try:
            environment.dataset.score_answer(extract_answer(reply), environment.entry)
        except Exception:  # noqa: BLE001, S110 - a scorer that raises on odd input (scored 0 by the env)
            pass

    ours_total = theirs_total = 0.0
    for _ in range(2):  # interleaved rounds
        ours_total += cpu_per_call(ours, cases, repeats)
        theirs_total += cpu_per_call(theirs, cases, repeats)
    return ours_total / 2, theirs_total / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generators", default="chain_sum,gcd,basic_arithmetic,leg_counting,letter_counting")
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {' '.join(f'{value:.1f}' for value in os.getloadavg())}; CPU µs per reply, best of rounds")
    for name in args.generators.split(","):
        ours, theirs = measure(name, args.items, args.repeats)
        print(f"  {name:<22} env {ours * 1e6:8.1f} µs   package {theirs * 1e6:8.1f} µs   ratio {ours / theirs:6.2f}x")


if __name__ == "__main__":
    main()
