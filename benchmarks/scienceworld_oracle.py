"""ScienceWorld's gold paths through every scienceworld/*-v0 env, cross-checked against the package's own step.

For each of the 30 task types, ``--variations`` seeded variations (all splits): the oracle
(the package's gold action sequence) through our env with the default step limit (100 moves,
the package's default) and with ``--long-limit``; the null policy ("wait1") with a
10-move limit. For the first variation of each type, the gold path and a failing variant (its
first ``focus on`` aimed at the air) are replayed through the package's ``ScienceWorldEnv.step``
(its infos' valid-action list left empty: no part of the score) and every step's score and
end are compared with ours, and its observation (which can differ in the order the simulator
lists objects). Prints per-type figures, the agreement, and the cost of one step: ours
against the package's full ``step`` (with its valid-action list), measured here.

    python -P benchmarks/scienceworld_oracle.py --variations 1 [--types 30] [--rest]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any


def play(env: Any, actions: list[str] | None, limit: int) -> tuple[float, int, int, float]:
    """(reward, steps, moves, score component) of one episode: the oracle when ``actions`` is None."""
    env.reset(seed=0, options={"step_limit": limit})
    for step in range(1, 10_000):
        action = env.oracle_action() if actions is None else actions[min(step - 1, len(actions) - 1)]
        _, value, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return value, step, info["moves"], info["score"]["components"]["score"]["value"]
    raise AssertionError("no end")


def replay_both(env: Any, simulator: Any, actions: list[str]) -> tuple[int, int, int]:
    """(steps compared, same score and end, same observation) of ``actions``: our env and the package's step."""
    ours = []
    env.reset(seed=0)
    for action in actions:
        observation, _, terminated, truncated, info = env.step(action)
        ours.append((observation, info["progress"], terminated or truncated))
        if terminated or truncated:
            break
    simulator.envStepLimit = 100
    simulator.get_valid_action_object_combinations = list
    simulator.load(env.task.task_name, env.task.variation, "")
    simulator.reset()
    theirs = []
    for action in actions:
        observation, _, done, info = simulator.step(action)
        theirs.append((observation, info["score"], bool(done)))
        if done:
            break
    verdicts = [a[1:] == b[1:] for a, b in zip(ours, theirs, strict=False)]
    texts = [a[0] == b[0] for a, b in zip(ours, theirs, strict=False)]
    if not all(verdicts) or len(ours) != len(theirs):
        first = verdicts.index(False) if not all(verdicts) else min(len(ours), len(theirs))
        print(f"  {env.task.id}: verdicts differ from step {first} ({actions[min(first, len(actions) - 1)]!r})")
    elif not all(texts):
        print(f"  {env.task.id}: same verdicts, {texts.count(False)} observations differ (the world's object order)")
    return max(len(ours), len(theirs)), sum(verdicts), sum(texts)


def step_cost(simulator: Any, env: Any) -> tuple[float, float]:
    """Seconds per step: ours, and the package's full step (which lists every valid action)."""
    from scienceworld import ScienceWorldEnv as Package

    env.reset(seed=0)
    started = time.perf_counter()
    for _ in range(20):
        env.step("look around")
    ours = (time.perf_counter() - started) / 20
    simulator.get_valid_action_object_combinations = Package.get_valid_action_object_combinations.__get__(simulator)
    simulator.load(env.task.task_name, env.task.variation, "")
    simulator.reset()
    started = time.perf_counter()
    for _ in range(20):
        simulator.step("look around")
    return ours, (time.perf_counter() - started) / 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variations", type=int, default=1)
    parser.add_argument("--long-limit", type=int, default=1000)
    parser.add_argument("--types", type=int, default=30, help="a seeded sample of this many task types")
    parser.add_argument(
        "--rest", action="store_true", help="the task types the seeded sample of --types leaves out instead"
    )
    arguments = parser.parse_args()
    from rolloutgym_benchmarks.scienceworld_envs import CATALOGUE, POOL, load_tasks, make_env, package_version

    print(f"scienceworld {package_version()}: {len(CATALOGUE)} task types")
    simulator = POOL.acquire()
    POOL.release(simulator)
    totals = {"episodes": 0, "oracle": 0.0, "long": 0.0, "null": 0.0, "compared": 0, "agreed": 0, "same_text": 0}
    chosen = set(random.Random(28).sample(list(CATALOGUE), arguments.types))
    for name in sorted(set(CATALOGUE) - chosen if arguments.rest else chosen):
        started = time.perf_counter()
        tasks = random.Random(f"sw-{name}").sample(load_tasks(name), arguments.variations)
        rows = []
        for index, task in enumerate(tasks):
            env = make_env(task)
            reward, steps, moves, _ = play(env, None, 100)
            gold = list(env._gold or [])
            long_reward = play(env, gold, arguments.long_limit)[0] if reward < 1.0 else reward
            null, _, _, null_score = play(env, [env.null_action()], 10)
            if index == 0:
                focus = next((i for i, action in enumerate(gold) if action.startswith("focus on")), None)
                variants = [gold] + ([[*gold[:focus], "focus on air", *gold[focus + 1 :]]] if focus is not None else [])
                for actions in variants:
                    compared, agreed, same_text = replay_both(env, simulator, actions)
                    totals["compared"] += compared
                    totals["agreed"] += agreed
                    totals["same_text"] += same_text
            env.close()
            rows.append((reward, long_reward, null, steps, moves, null_score))
            totals["episodes"] += 1
            totals["oracle"] += reward
            totals["long"] += long_reward
            totals["null"] += null
        mean = [sum(row[i] for row in rows) / len(rows) for i in range(3)]
        print(
            f"{name:48s} oracle {mean[0]:.2f} (limit {arguments.long_limit}: {mean[1]:.2f})  null {mean[2]:.2f} "
            f"(its score {sum(row[5] for row in rows) / len(rows):.2f})  "
            f"gold steps {max(row[3] for row in rows):3d} moves {max(row[4] for row in rows):3d}  "
            f"{time.perf_counter() - started:6.1f} s",
            flush=True,
        )
    episodes = totals["episodes"]
    print(
        f"episodes {episodes}: oracle {totals['oracle'] / episodes:.4f} at the default 100-move limit, "
        f"{totals['long'] / episodes:.4f} at {arguments.long_limit}; null {totals['null'] / episodes:.4f}"
    )
    print(
        f"cross-check: score and end agree with the package's step on {totals['agreed']}/{totals['compared']} steps; "
        f"observations equal on {totals['same_text']}"
    )
    env = make_env(load_tasks("find-animal")[0])
    ours, theirs = step_cost(simulator, env)
    env.close()
    print(f"one step: ours {ours * 1000:.1f} ms, package's step {theirs * 1000:.1f} ms (ratio {theirs / ours:.1f}x)")


if __name__ == "__main__":
    main()
