"""rollout() throughput on a trivial 200-step env, against a raw Gymnasium loop and rolloutlib 0.2.0.

Prints steps per second for each and the ratios (measured in this run). rolloutlib is
optional: ``pip install rolloutlib==0.2.0`` (``hatch run bench:python benchmarks/rollout_speed.py``).

Target (issue 2): rolloutgym >= 5x rolloutlib's steps/s.
"""

from __future__ import annotations

import argparse
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


def measure(functions: dict, env: Trivial, episodes: int, repeats: int) -> dict:
    """Best-of-``repeats`` steps/s for each function, interleaved so load affects all alike."""
    best = {name: 0.0 for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            started = time.perf_counter()
            for _ in range(episodes):
                function(env)
            elapsed = time.perf_counter() - started
            best[name] = max(best[name], episodes * env.length / elapsed)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from rolloutgym import rollout

    functions = {"raw": raw_loop, "rolloutgym": lambda e: rollout(e, policy)}
    try:
        import rolloutlib

        functions["rolloutlib"] = lambda e: rolloutlib.rollouts.rollout(e, policy)
    except Exception as exc:  # rolloutlib is optional
        print(f"rolloutlib 0.2.0 not measured ({type(exc).__name__}: {exc}); pip install rolloutlib==0.2.0")
    rates = measure(functions, Trivial(), args.episodes, args.repeats)
    raw = rates["raw"]
    for name, rate in rates.items():
        print(f"{name:>11}: {rate:12,.0f} steps/s  ({rate / raw:.3f}x the raw gymnasium loop)")
    if "rolloutlib" in rates:
        print(f"rolloutgym / rolloutlib steps/s ratio: {rates['rolloutgym'] / rates['rolloutlib']:.2f}x (target >= 5x)")


if __name__ == "__main__":
    main()
