"""Full oracle / null / hedge pass over every served reasoning-gym generator (not a CI test: minutes).

For each generator, ``--items`` train tasks (``--slow-items`` for the slow ones) are made
through ``rg/mixture-v0`` with ``generators=NAME`` and played through the env's own
``oracle_action`` / ``null_action`` and ``step``. Besides, per problem, the env's verdict is
compared with the package's own evaluation (``score_answer(extract_answer(reply)) == 1.0``,
on a dataset made with ``reasoning_gym.create_dataset``, not through our cache) for the gold
reply and a wrong one (another problem's gold), and three reward hacks are tried: a hedge
(``gold or wrong`` in one tag), two tags (wrong, then gold) and stuffing (gold plus the
question). Prints per generator: items, oracle mean, null mean, agreement with the package,
what the package's scorer itself accepts of the hacks, what the env accepts, seconds per
problem.

    python benchmarks/reasoning_gym_oracle.py [--items 100] [--slow-items 10] [--generators chain_sum,gcd]
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def play(environment: Any, action: str) -> float:
    environment.reset(seed=0)
    _, reward, _, _, _ = environment.step(action)
    return float(reward)


def check_generator(name: str, count: int) -> dict[str, Any]:
    import reasoning_gym
    from reasoning_gym.utils import extract_answer
    from rolloutgym_benchmarks._rg_catalogue import OWN_GRADE
    from rolloutgym_benchmarks.rg import make_env, oracle_answer, package_score, rg_tasks

    started = time.perf_counter()
    tasks = rg_tasks("train", count + 1)
    envs = [make_env(task, family="mixture", generators=name) for task in tasks]
    seconds = (time.perf_counter() - started) / len(envs)
    reference = reasoning_gym.create_dataset(name, seed=0, size=10_000)
    row: dict[str, Any] = {
        "name": name,
        "items": count,
        "oracle": 0.0,
        "null": 0.0,
        "agree": 0,
        "cases": 0,
        "sec": seconds,
    }
    hacks = {"hedge": [0, 0], "two_tags": [0, 0], "stuffed": [0, 0]}
    misses = []
    for index in range(count):
        environment, other = envs[index], envs[index + 1]
        entry = reference[index]
        # list_functions and codeio draw from the global random too: the package itself is not
        # reproducible there (a question or its answer changes between two calls).
        again = reference[index]
        reproducible = (entry["question"], entry["answer"]) == (again["question"], again["answer"])
        if reproducible and entry["question"] != environment.entry["question"]:
            misses.append(f"{environment.task_id}: not the package's problem {index}")
        entry = entry if reproducible else environment.entry
        gold = oracle_answer(name, entry)
        wrong = oracle_answer(name, other.entry)
        oracle = play(environment, environment.oracle_action())
        row["oracle"] += oracle / count
        row["null"] += play(environment, environment.null_action()) / count
        if oracle < 1.0:
            misses.append(environment.task_id)
        for reply in (f"<answer>{gold}</answer>", f"<answer>{wrong}</answer>"):
            ours = play(environment, reply) == 1.0
            theirs = package_score(reference, extract_answer(reply), entry)[0] >= 1.0
            if name in OWN_GRADE:  # its scorer accepts any non-empty reply: the stated exception
                theirs = extract_answer(reply).lower() == str(entry["answer"]).lower()
            row["cases"] += 1
            row["agree"] += ours == theirs
        # A hedge needs a wrong candidate: skip problems where the other gold is right here too
        # (propositional_logic: another valid conclusion).
        if gold == wrong or play(environment, f"<answer>{wrong}</answer>") == 1.0:
            continue
        for hack, reply in (
            ("hedge", f"<answer>{gold} or {wrong}</answer>"),
            ("two_tags", f"<answer>{wrong}</answer> <answer>{gold}</answer>"),
            ("stuffed", f"<answer>{gold}\n{entry['question']}</answer>"),
        ):
            hacks[hack][0] += package_score(reference, extract_answer(reply), entry)[0] >= 1.0
            hacks[hack][1] += play(environment, reply) == 1.0
    row["hacks"] = hacks
    row["misses"] = misses
    return row


def main() -> None:
    from rolloutgym_benchmarks._rg_catalogue import SLOW, family_generators, package_version

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--slow-items", type=int, default=10)
    parser.add_argument("--generators", default=None, help="comma-separated names (default: every served one)")
    arguments = parser.parse_args()
    names = arguments.generators.split(",") if arguments.generators else family_generators("mixture")
    print(f"reasoning-gym {package_version()}: {len(names)} generators")
    print(
        f"{'generator':26} {'items':>5} {'oracle':>7} {'null':>5} {'agree':>9}  "
        "hacks package/env (hedge two-tags stuffed)  s/item"
    )
    totals = {"items": 0, "cases": 0, "agree": 0, "env_hacks": 0}
    for name in names:
        count = arguments.slow_items if name in SLOW else arguments.items
        row = check_generator(name, count)
        hacks = row["hacks"]
        hack_text = "  ".join(f"{package}/{ours}" for package, ours in hacks.values())
        print(
            f"{name:26} {row['items']:5d} {row['oracle']:7.4f} {row['null']:5.2f} {row['agree']:4d}/{row['cases']:<4d}"
            f"  {hack_text:40} {row['sec']:.3f}" + (f"  oracle misses: {row['misses'][:5]}" if row["misses"] else ""),
            flush=True,
        )
        totals["items"] += row["items"]
        totals["cases"] += row["cases"]
        totals["agree"] += row["agree"]
        totals["env_hacks"] += sum(ours for _, ours in hacks.values())
    print(
        f"total: {totals['items']} problems, verdict = package on {totals['agree']}/{totals['cases']} gold/wrong "
        f"replies, hacks the env accepted: {totals['env_hacks']}"
    )


if __name__ == "__main__":
    main()
