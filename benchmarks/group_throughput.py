"""arollout_group scheduling: 10,000 single-turn rollouts, a policy that sleeps 10 ms, concurrency 2,000.

The ideal wall time is (rollouts / concurrency) x latency = 50 ms. Prints rolloutgym's
wall time as a multiple of the ideal and, when rolloutlib 0.2.0 is installed, rolloutlib's
at 5,000 rollouts / concurrency 1,000 (the configuration measured for it) and at ours.

Target (issue 2): rolloutgym <= 1.3x the ideal. Target (issue 19): rolloutgym <= 2x the
bare-asyncio floor measured in the same run (the same sleeps with no env and no records), and
the memory each finished trajectory keeps (measured with tracemalloc over one group) halved.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc

import gymnasium as gym


def build_env(base: type) -> type:
    class OneTurn(base):  # type: ignore[misc, valid-type]
        action_space = gym.spaces.Discrete(2)
        observation_space = gym.spaces.Discrete(2)

        async def reset(self, *, seed=None, options=None):
            return 0, {}

        async def step(self, action):
            return 1, 1.0, True, False, {}

    return OneTurn


def make_policy(latency: float):
    async def policy(observation):
        await asyncio.sleep(latency)
        return 1

    return policy


def timed(coroutine_factory) -> float:
    started = time.perf_counter()
    asyncio.run(coroutine_factory())
    return time.perf_counter() - started


def bytes_per_trajectory(coroutine_factory, rollouts: int) -> float:
    """Bytes the finished group holds per trajectory (tracemalloc, after a full collection)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    group = asyncio.run(coroutine_factory())
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(group.trajectories) == rollouts
    return held / rollouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=2_000)
    parser.add_argument("--latency-ms", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    latency = args.latency_ms / 1000

    from rolloutgym import AsyncEnv, arollout_group

    Ours = build_env(AsyncEnv)
    policy = make_policy(latency)

    def ours(rollouts: int, concurrency: int):
        return lambda: arollout_group(0, lambda item: Ours(), policy, num_rollouts=rollouts, concurrency=concurrency)

    ideal = args.rollouts / args.concurrency * latency

    async def bare_floor() -> None:
        # The same sleeps with no environment and no records: what asyncio itself costs here.
        members = iter(range(args.rollouts))

        async def worker() -> None:
            for _ in members:
                await policy(0)

        await asyncio.gather(*(worker() for _ in range(args.concurrency)))

    floor = min(timed(bare_floor) for _ in range(args.repeats))
    times = [timed(ours(args.rollouts, args.concurrency)) for _ in range(args.repeats)]
    best, median = min(times), statistics.median(times)
    print(
        f"ideal: {ideal * 1000:.1f} ms ({args.rollouts} rollouts, concurrency {args.concurrency}, {args.latency_ms:g} ms policy)"
    )
    print(f"bare asyncio floor (sleeps only): best {floor * 1000:.1f} ms = {floor / ideal:.2f}x ideal")
    print(
        f"rolloutgym arollout_group: best {best * 1000:.1f} ms = {best / ideal:.2f}x ideal; median {median * 1000:.1f} ms = {median / ideal:.2f}x ideal (target <= 1.3x)"
    )
    print(f"rolloutgym over the bare asyncio floor: {best / floor:.2f}x (target <= 2x)")
    print(
        f"memory kept per finished trajectory: {bytes_per_trajectory(ours(args.rollouts, args.concurrency), args.rollouts):.0f} bytes"
    )
    try:
        import rolloutlib
        from rolloutlib import AsyncEnv as TheirAsyncEnv
    except Exception as exc:
        print(f"rolloutlib 0.2.0 not measured ({type(exc).__name__}: {exc}); pip install rolloutlib==0.2.0")
        return
    Theirs = build_env(TheirAsyncEnv)
    for rollouts, concurrency in ((5_000, 1_000), (args.rollouts, args.concurrency)):
        their_ideal = rollouts / concurrency * latency
        their = [
            timed(
                lambda rollouts=rollouts, concurrency=concurrency: rolloutlib.arollout_group(
                    0, lambda item: Theirs(), policy, num_rollouts=rollouts, concurrency=concurrency
                )
            )
            for _ in range(max(1, args.repeats // 2))
        ]
        print(
            f"rolloutlib arollout_group at {rollouts}/{concurrency}: best {min(their) * 1000:.1f} ms = {min(their) / their_ideal:.2f}x ideal"
        )


if __name__ == "__main__":
    main()
