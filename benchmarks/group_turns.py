"""``arollout_group``'s loop turns: the worker clock of issue 49 against the one before, in one process.

10,000 single-turn rollouts, a policy that sleeps 10 ms, concurrency 2,000 (``group_throughput.py``'s
setting). Before issue 49, each worker gave the event loop an extra turn (``asyncio.sleep(0)``) once
its own clock passed ``LOOP_TURN_SECONDS``, also when its members had waited all along (10,000 extra
turns in this setting); :class:`rolloutgym.rollouts.LoopTurns` gives one only when no member waited.
The old rule is restored here by replacing ``LoopTurns.due``, so both run on the same code otherwise;
rounds alternate the order. Prints the CPU time of each (best, median) and the median of the paired ratios.

    python benchmarks/group_turns.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import time

from group_throughput import build_env, make_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()

    from rolloutgym import AsyncEnv, arollout_group
    from rolloutgym.rollouts import LOOP_TURN_SECONDS, LoopTurns

    new_due = LoopTurns.due

    def old_due(self: LoopTurns) -> bool:  # the rule before issue 49: the worker's own clock only
        now = time.perf_counter()
        if now - self._since > LOOP_TURN_SECONDS:
            self._since = now
            return True
        return False

    environment, policy = build_env(AsyncEnv), make_policy(0.01)
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    cpu: dict[str, list[float]] = {"before (worker clock)": [], "LoopTurns": []}
    for round_ in range(args.rounds):
        order = [("before (worker clock)", old_due), ("LoopTurns", new_due)]
        for name, due in order if round_ % 2 else reversed(order):
            LoopTurns.due = due  # type: ignore[method-assign]
            gc.collect()
            started = time.process_time()
            asyncio.run(arollout_group(0, lambda item: environment(), policy, num_rollouts=10_000, concurrency=2_000))
            cpu[name].append(time.process_time() - started)
    LoopTurns.due = new_due  # type: ignore[method-assign]
    print(f"arollout_group, 10,000 rollouts, concurrency 2,000, 10 ms policy; CPU time, {args.rounds} rounds")
    print(f"load average {load} at the start")
    for name, values in cpu.items():
        print(f"  {name:<22} best {min(values) * 1e3:6.0f} ms, median {statistics.median(values) * 1e3:6.0f} ms")
    pairs = zip(cpu["LoopTurns"], cpu["before (worker clock)"], strict=True)
    paired = statistics.median(new / old for new, old in pairs)
    print(f"  LoopTurns / before: {paired:.2f} (median of the paired rounds)")


if __name__ == "__main__":
    main()
