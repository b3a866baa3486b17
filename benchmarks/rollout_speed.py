"""rollout() throughput on a trivial 200-step env, against a raw Gymnasium loop and rolloutlib 0.2.0.

Prints steps per second for each and the ratios (measured in this run). rolloutlib is
optional: ``pip install rolloutlib==0.2.0`` (``hatch run bench:python benchmarks/rollout_speed.py``).

Target (issue 2): rolloutgym >= 5x rolloutlib's steps/s. Issue 49: ``rollout()`` <= 3x the bare
loop's CPU per step; ``raw+records`` (the bare loop building one ``Step`` per step, nothing else)
shows what the eager records alone cost.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium as gym


class Trivial(gym.Env):
    """200 steps of nothing: the cost measured is the rollout loop's own."""

    action_space = gym.spaces.Discrete(2)
    observation_space = gym.spaces.Discrete(201)

    def __init__(self, length: int = 200) -> None:
        self.length = length
        self.count = 0

    def reset(self, *, seed=None, options=None):
        self.count = 0
        return 0, {}

    def step(self, action):
        self.count += 1
        return self.count, 1.0, self.count >= self.length, False, {}


def policy(observation):
    return 1


def raw_loop(env: Trivial) -> int:
    observation, _ = env.reset()
    steps = 0
    while True:
        observation, reward, terminated, truncated, info = env.step(policy(observation))
        steps += 1
        if terminated or truncated:
            return steps


def records_loop(env: Trivial) -> int:
    """The bare loop plus one ``Step`` record per step (``Step._trusted``, no checks): what eager records cost."""
    from rolloutgym_protocol import Step
    from rolloutgym_protocol.records import SHARED_EMPTY

    trusted, empty = Step._trusted, SHARED_EMPTY
    observation, _ = env.reset()
    steps = []
    while True:
        action = policy(observation)
        following, reward, terminated, truncated, info = env.step(action)
        steps.append(trusted(observation, action, reward, following, terminated, truncated, info or empty, empty))
        observation = following
        if terminated or truncated:
            return len(steps)


def measure(functions: dict, env: Trivial, episodes: int, repeats: int) -> tuple[dict, dict]:
    """Best-of-``repeats`` steps/s of CPU time for each function, and the median per-round ratio to ``raw``.

    Rounds interleave the functions so load affects all alike; each function's round runs for
    about the same CPU time (the raw loop plays more episodes), since on a loaded machine a
    short run is more likely to find a quiet slice than a long one, which biased the ratio.
    """
    clock = time.process_time
    counts = {}
    for name, function in functions.items():  # calibrate: episodes per ~equal round
        started = clock()
        for _ in range(episodes):
            function(env)
        counts[name] = (clock() - started, episodes)
    slowest = max(seconds / count for seconds, count in counts.values())
    rounds = {name: max(1, round(episodes * slowest / (seconds / count))) for name, (seconds, count) in counts.items()}
    best = {name: 0.0 for name in functions}
    ratios: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeats):
        rates = {}
        for name, function in functions.items():
            started = clock()
            for _ in range(rounds[name]):
                function(env)
            rates[name] = rounds[name] * env.length / max(clock() - started, 1e-9)
            best[name] = max(best[name], rates[name])
        for name, rate in rates.items():
            ratios[name].append(rates["raw"] / rate)
    return best, {name: statistics.median(values) for name, values in ratios.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from rolloutgym import rollout

    functions = {"raw": raw_loop, "raw+records": records_loop, "rolloutgym": lambda e: rollout(e, policy)}
    try:
        import rolloutlib

        functions["rolloutlib"] = lambda e: rolloutlib.rollouts.rollout(e, policy)
    except Exception as exc:  # rolloutlib is optional
        print(f"rolloutlib 0.2.0 not measured ({type(exc).__name__}: {exc}); pip install rolloutlib==0.2.0")
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    rates, ratios = measure(functions, Trivial(), args.episodes, args.repeats)
    raw = rates["raw"]
    print(f"CPU time, best of {args.repeats} interleaved rounds; load average {load}")
    for name, rate in rates.items():
        print(
            f"{name:>11}: {rate:12,.0f} steps/s  ({raw / rate:.2f}x the raw loop's CPU per step; "
            f"median of the rounds {ratios[name]:.2f}x)"
        )
    if "rolloutlib" in rates:
        print(f"rolloutgym / rolloutlib steps/s ratio: {rates['rolloutgym'] / rates['rolloutlib']:.2f}x (target >= 5x)")
    print(f"rollout() per step: {raw / rates['rolloutgym']:.2f}x the bare env.step(policy(obs)) loop (target <= 3x)")


if __name__ == "__main__":
    main()
