"""Which groups an asynchronous trainer trains on, per staleness mode of ``RolloutQueue`` (issue 48).

A stream of groups, a share of them hard (many turns, so slow) and the rest easy (one turn), is
rolled out in the background by :class:`rolloutgym.llm.offpolicy.RolloutQueue` with a simulated
policy (a scripted sampler that waits a fixed time per model call: no model needed), while a
simulated trainer takes each group, spends a fixed time on the update, and bumps the policy
version. Per mode (``drop``, ``mask``, ``pace``) it prints the groups the trainer *trained on*
(handed out with their tokens unmasked), the hard tasks' share of them against their share of the
stream (the ratio is 1.0 when training sees the tasks as they come), groups dropped or masked, and
the wall time against ``drop``'s, measured in the same run.

    python benchmarks/staleness_modes.py [--groups 60] [--hard-share 0.3] [--max-staleness 2] [--seeds 3]

Expected: ``drop`` trains on hard tasks far less often than they come (the slow groups are the
stale ones); ``mask`` hands them out but trains on none of their tokens (their rewards still count
in a baseline); ``pace`` trains on every group, hard ones included, at the price of throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from typing import Any

from rolloutgym import AsyncEnv, spaces
from rolloutgym.llm import CharRenderer, ScriptedSampler
from rolloutgym.llm.offpolicy import STALENESS_MODES, RolloutQueue, VersionedSampler

RENDERER = CharRenderer()


class _Policy:
    """A scripted policy whose every model call takes ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.renderer = RENDERER
        self.delay = delay
        self.sampler = ScriptedSampler(RENDERER.encode, ["ok"] * 1000, end_token_id=CharRenderer.END)

    async def generate(self, prompts: Any, params: Any) -> list[Any]:
        await asyncio.sleep(self.delay)
        return [await self.sampler.sample(p, q) for p, q in zip(prompts, params, strict=True)]


class _Turns(AsyncEnv):
    """An episode of ``task`` assistant turns (reward: its length, so the trainer can tell hard from easy)."""

    def __init__(self, task: int) -> None:
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.length, self.turns = int(task), 0

    async def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        self.turns = 0
        return [{"role": "user", "content": "go"}], {}

    async def step(self, action: Any) -> Any:
        self.turns += 1
        if self.turns < self.length:
            return [{"role": "user", "content": "more"}], 0.0, False, False, {}
        return [], float(self.length), True, False, {}

    async def close(self) -> None:
        return None


def _one(mode: str, lengths: list[int], arguments: argparse.Namespace) -> dict[str, Any]:
    sampler = VersionedSampler(_Policy(arguments.call_seconds))
    groups = [[{"task_name": "t", "task": length}] * arguments.group_size for length in lengths]

    async def main() -> dict[str, Any]:
        trained_hard = trained = 0
        async with RolloutQueue(
            sampler,
            groups,
            {"t": _Turns},
            max_staleness=arguments.max_staleness,
            concurrency=arguments.concurrency,
            max_queued=arguments.max_queued,
            max_seq_len=4096,
            staleness=mode,
        ) as queue:
            async for batch in queue:
                if not batch.metrics["staleness"]["masked"]:
                    trained += 1
                    trained_hard += batch["total_reward"][0] > 1
                await asyncio.sleep(arguments.update_seconds)
                await sampler.update()
        return {"trained": trained, "trained_hard": trained_hard, **queue.stats}

    started = time.perf_counter()
    result = asyncio.run(main())
    result["seconds"] = time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=60)
    parser.add_argument("--group-size", type=int, default=2)
    parser.add_argument("--hard-share", type=float, default=0.3)
    parser.add_argument("--hard-turns", type=int, default=6)
    parser.add_argument("--call-seconds", type=float, default=0.01)
    parser.add_argument("--update-seconds", type=float, default=0.01)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-queued", type=int, default=1)
    parser.add_argument("--max-staleness", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3)
    arguments = parser.parse_args()
    modes = ("drop", *[mode for mode in STALENESS_MODES if mode != "drop"])
    rows: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    stream_share = []
    for seed in range(arguments.seeds):
        rng = random.Random(seed)
        lengths = [arguments.hard_turns if rng.random() < arguments.hard_share else 1 for _ in range(arguments.groups)]
        stream_share.append(sum(length > 1 for length in lengths) / len(lengths))
        for mode in modes:  # the same stream for every mode, modes interleaved per seed (same load)
            rows[mode].append(_one(mode, lengths, arguments))
    share = statistics.mean(stream_share)
    print(
        f"{arguments.groups} groups x {arguments.seeds} seeds, hard share of the stream {share:.1%} "
        f"({arguments.hard_turns} turns vs 1), max_staleness {arguments.max_staleness}, "
        f"concurrency {arguments.concurrency}, {arguments.call_seconds * 1000:.0f} ms per model call, "
        f"{arguments.update_seconds * 1000:.0f} ms per update"
    )
    base_seconds = statistics.mean(row["seconds"] for row in rows["drop"])
    print(
        f"{'mode':6} {'trained':>8} {'hard share of trained':>22} {'vs stream':>10} {'dropped':>8} "
        f"{'masked':>7} {'paced waits':>12} {'max lag':>8} {'time vs drop':>13}"
    )
    for mode in modes:
        trained = sum(row["trained"] for row in rows[mode])
        hard = sum(row["trained_hard"] for row in rows[mode]) / trained if trained else 0.0
        seconds = statistics.mean(row["seconds"] for row in rows[mode])
        print(
            f"{mode:6} {trained / arguments.seeds:8.1f} {hard:22.1%} {hard / share if share else 0:10.2f} "
            f"{sum(row['dropped_stale'] for row in rows[mode]) / arguments.seeds:8.1f} "
            f"{sum(row['masked_stale'] for row in rows[mode]) / arguments.seeds:7.1f} "
            f"{sum(row['paced_waits'] for row in rows[mode]) / arguments.seeds:12.1f} "
            f"{max(row['max_lag'] for row in rows[mode]):8d} {seconds / base_seconds:12.2f}x"
        )


if __name__ == "__main__":
    main()
