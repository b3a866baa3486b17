"""code/humaneval-v0: the oracle (canonical solution) and the null policy on all 164 problems.

For every problem, plays the completion-mode env with the oracle action (the canonical
solution, graded by the benchmark's check on the trusted side against the solution in the
sandbox) and the null action (an empty completion), and prints how many score 1.0 and 0.0 and the time per
grading. Target: oracle 164/164 = 1.0, null 0/164.

Run: ``python benchmarks/humaneval_oracle.py`` (``--mode agent`` for the tool mode,
``--workers N`` for parallel gradings, ``--limit N`` for the first N problems).
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from rolloutgym.registry import get_registry


def play(task_id: str, policy: str, mode: str) -> tuple[str, str, float, float, str]:
    environment = get_registry().make("code/humaneval-v0", task=task_id, mode=mode)
    started = time.perf_counter()
    try:
        environment.reset(seed=0)
        while True:
            action = environment.oracle_action() if policy == "oracle" else environment.null_action()
            _, reward, terminated, truncated, info = environment.step(action)
            if terminated or truncated:
                break
    finally:
        environment.close()
    return task_id, policy, float(reward), time.perf_counter() - started, info.get("score", {}).get("feedback", "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="completion", choices=["completion", "agent"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None)
    options = parser.parse_args()
    ids = [task.id for task in get_registry().tasks("code/humaneval-v0")][: options.limit]
    jobs = [(task_id, policy) for task_id in ids for policy in ("oracle", "null")]
    started = time.perf_counter()
    with ThreadPoolExecutor(options.workers) as pool:
        results = list(pool.map(lambda job: play(job[0], job[1], options.mode), jobs))
    elapsed = time.perf_counter() - started
    for policy in ("oracle", "null"):
        rewards = [reward for _, name, reward, _, _ in results if name == policy]
        durations = [duration for _, name, _, duration, _ in results if name == policy]
        print(
            f"{policy:6s} mean reward {statistics.mean(rewards):.3f}  ({sum(r == 1.0 for r in rewards)}/{len(rewards)} "
            f"score 1.0)  median {statistics.median(durations):.2f} s per episode"
        )
        for task_id, name, reward, _, feedback in results:
            if name == policy and reward != (1.0 if policy == "oracle" else 0.0):
                print(f"  {task_id} {policy} scored {reward}: {feedback[:300]}")
    print(f"{len(jobs)} episodes ({options.mode} mode) in {elapsed:.1f} s with {options.workers} workers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
