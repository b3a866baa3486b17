"""``summarize`` of one task x 10,000 rollouts against the same 10,000 as 40 tasks x 250, in one run.

pass@k and pass^k are computed for k on the powers of two up to the group size (and the group
size), with running products instead of big-integer binomials, once per distinct (draws,
passes) pair: linear in the number of rollouts. Target (issue 30): one task x 10,000 no slower
than 2x the 40 x 250 split (was 15 s against 1.6 s of CPU with every k and math.comb), and
well under a second. Also times the old every-k big-integer form on the small split as a baseline.
"""

from __future__ import annotations

import argparse
import math
import random
import time

from rolloutgym.runs.stats import GroupFacts, summarize


def groups(tasks: int, size: int, rng: random.Random) -> list[GroupFacts]:
    return [
        GroupFacts(f"t{t}", tuple(float(rng.random() < 0.4) for _ in range(size)), (1,) * size, (), 0, 0, 0.0)
        for t in range(tasks)
    ]


def timed(facts: list[GroupFacts], repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        started = time.process_time()
        summarize(facts)
        best = min(best, time.process_time() - started)
    return best


def old_every_k(facts: list[GroupFacts]) -> float:
    """The former form: every k of 1..n, math.comb per task and k (CPU seconds)."""
    started = time.process_time()
    n = min(len(group.scores) for group in facts)
    for k in range(1, n + 1):
        for group in facts:
            c = sum(value >= 1.0 for value in group.scores)
            _ = 1.0 - math.comb(n - c, k) / math.comb(n, k) if n - c >= k else 1.0
            _ = math.comb(c, k) / math.comb(n, k)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(0)
    one = groups(1, args.rollouts, rng)
    split = groups(40, args.rollouts // 40, rng)
    single, spread = timed(one, args.repeats), timed(split, args.repeats)
    print(f"summarize 1 x {args.rollouts:,}      : {single:.3f} s CPU")
    print(f"summarize 40 x {args.rollouts // 40:,}       : {spread:.3f} s CPU")
    print(f"ratio: {single / spread:.2f}x (target <= 2x)")
    print(f"old every-k math.comb, 40 x {args.rollouts // 40} (baseline): {old_every_k(split):.3f} s CPU")


if __name__ == "__main__":
    main()
