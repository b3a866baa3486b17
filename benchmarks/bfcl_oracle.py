"""Full oracle and null pass over every served BFCL v4 category (not a CI test: minutes).

For each ``bfcl/*-v0`` env, every task is played once by the oracle (the possible/ground
truth answers) and once by the null policy (an empty reply), through the env's own
``oracle_action`` / ``null_action`` and ``step`` (no engine overhead). Prints per category:
tasks, oracle mean, null mean, seconds, and the ids where the oracle missed 1.0 with the
grader's feedback. Optionally ``--engine N`` also runs the first N tasks of each category
through ``rolloutgym``'s rollout engine and checks that it reports the same scores.

``--info`` also times ``rolloutgym info`` on the largest single- and multi-turn
categories against ``rolloutgym info toy/guess-v0`` (best of 3, fresh processes).

    python benchmarks/bfcl_oracle.py [--categories simple,multi-turn-base] [--engine 3] [--info]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from typing import Any


def play(environment: Any, policy: str) -> float:
    observation, _ = environment.reset(seed=0)
    for _ in range(10_000):
        action = environment.oracle_action() if policy == "oracle" else environment.null_action()
        observation, reward, terminated, truncated, info = environment.step(action)
        if terminated or truncated:
            environment.last_feedback = (info.get("score") or {}).get("feedback")
            return float(reward)
    raise RuntimeError("episode did not end")


def _info_seconds(env_id: str, repeats: int = 3) -> tuple[float, float]:
    """Best wall and best CPU (user + system) seconds of ``rolloutgym info ENV`` in a fresh process."""
    import resource

    best_wall = best_cpu = float("inf")
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        begin = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rolloutgym", "info", env_id], check=True, capture_output=True)
        best_wall = min(best_wall, time.perf_counter() - begin)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best_cpu = min(best_cpu, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return best_wall, best_cpu


def time_info() -> None:
    wall, cpu = _info_seconds("toy/guess-v0")
    print(f"rolloutgym info toy/guess-v0 (baseline): {wall:.2f} s wall, {cpu:.2f} s CPU")
    for env_id in ("bfcl/simple-v0", "bfcl/live-multiple-v0", "bfcl/multi-turn-long-context-v0"):
        seconds, used = _info_seconds(env_id)
        print(
            f"rolloutgym info {env_id}: {seconds:.2f} s wall ({seconds / wall:.2f}x), {used:.2f} s CPU "
            f"(+{used - cpu:.2f} s)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--categories", default="", help="comma-separated env names (default: all)")
    parser.add_argument(
        "--engine", type=int, default=0, help="also run the first N tasks per category through the rollout engine"
    )
    parser.add_argument("--info", action="store_true", help="time `rolloutgym info` on bfcl envs against a toy env")
    arguments = parser.parse_args()
    if arguments.info:
        time_info()

    from rolloutgym_bfcl import CATEGORIES, make_env, package_version, tasks_for_env

    wanted = {name.strip() for name in arguments.categories.split(",") if name.strip()}
    print(f"bfcl-eval {package_version()}")
    print(f"{'env':34} {'tasks':>6} {'oracle':>8} {'null':>8} {'seconds':>8}")
    exceptions: list[str] = []
    total_tasks = 0
    started = time.perf_counter()
    for category in CATEGORIES:
        if wanted and category.name not in wanted:
            continue
        begin = time.perf_counter()
        tasks = tasks_for_env(category.env_id)
        oracle_total = null_total = 0.0
        for task in tasks:
            environment = make_env(task, env_id=category.env_id)
            oracle = play(environment, "oracle")
            if oracle < 1.0:
                exceptions.append(f"{category.env_id} {task.id}: {environment.last_feedback}")
            oracle_total += oracle
            null_total += play(environment, "null")
            environment.close()
        total_tasks += len(tasks)
        print(
            f"{category.env_id:34} {len(tasks):>6} {oracle_total / len(tasks):>8.4f} {null_total / len(tasks):>8.4f} "
            f"{time.perf_counter() - begin:>8.1f}",
            flush=True,
        )
        if arguments.engine:
            from rolloutgym_testing import run_episode

            for task in tasks[: arguments.engine]:
                trajectory = run_episode(category.env_id, "oracle", task=task.id)
                direct = play(make_env(task, env_id=category.env_id), "oracle")
                if trajectory.score.value != direct:
                    exceptions.append(
                        f"{category.env_id} {task.id}: engine scored {trajectory.score.value}, direct {direct}"
                    )
    print(f"{total_tasks} tasks in {time.perf_counter() - started:.1f} s")
    print(f"oracle below 1.0 on {len(exceptions)} task(s)" + (":" if exceptions else "."))
    for line in exceptions:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
