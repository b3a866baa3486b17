"""Free-running samples vs wave-synchronised waves, with a model whose latency varies per sample.

A batched engine answers a wave when its slowest row is done; an engine with continuous
batching answers each request when that request is done. The stand-in generator sleeps
for the latency of each sample's turn (seeded, drawn per sample and turn from
``--low``..``--high`` seconds): one call per wave sleeps the slowest row's latency, one call
per request its own. Same episodes, same tokens (a scripted model over CharRenderer, a
four-turn env), so the only difference is the schedule; the free-running variant should
win by about the spread of the latencies. Also printed: the loop's own CPU per turn next to
the generation time (target <= 5 %).

    python benchmarks/free_running.py [--samples 64] [--turns 4] [--low 0.005] [--high 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from typing import Any

from rolloutgym import AsyncEnv, spaces
from rolloutgym.llm import CharRenderer, ScriptedSampler, arun_multi_turn_rollout

RENDERER = CharRenderer()


class Turns(AsyncEnv):
    """``turns`` assistant turns, then reward 1."""

    turns = 4

    def __init__(self, task: int) -> None:
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.task, self.count = task, 0

    async def reset(self, *, seed=None, options=None) -> Any:
        self.count = 0
        return [{"role": "user", "content": f"Task {self.task}: keep talking."}], {}

    async def step(self, action) -> Any:
        self.count += 1
        if self.count < Turns.turns:
            return [{"role": "user", "content": "go on"}], 0.0, False, False, {}
        return [], 1.0, True, False, {}

    async def close(self) -> None:
        return None


class Engine:
    """Sleeps each request's latency (per call: the slowest row's)."""

    def __init__(self, latency: dict[tuple[int, ...], float]) -> None:
        self.renderer = RENDERER
        self.sampler = ScriptedSampler(RENDERER.encode, ["ok"], end_token_id=CharRenderer.END)
        self.latency = latency
        self.sleeping = 0.0

    async def generate(self, prompts, params):
        pause = max(self.latency[tuple(prompt)] for prompt in prompts)
        self.sleeping += pause
        await asyncio.sleep(pause)
        return [await self.sampler.sample(p, q) for p, q in zip(prompts, params, strict=True)]


def latencies(samples: int, turns: int, low: float, high: float) -> dict[tuple[int, ...], float]:
    """The latency of each (sample, turn) prompt, keyed by its token ids (the prompts are fixed)."""
    draw = random.Random(0)
    table: dict[tuple[int, ...], float] = {}
    for task in range(samples):
        prompt = RENDERER.render_prompt([{"role": "user", "content": f"Task {task}: keep talking."}], [])
        for _ in range(turns):
            table[tuple(prompt)] = draw.uniform(low, high)
            reply = [*RENDERER.encode("ok"), CharRenderer.END]
            prompt = prompt + reply + RENDERER.render_continuation(reply, [{"role": "user", "content": "go on"}], [])
    return table


def measure(samples: int, table: dict[tuple[int, ...], float], free_running: bool) -> tuple[float, float, float]:
    engine = Engine(table)
    batch = [{"task_name": "turns", "task": index} for index in range(samples)]
    wall, cpu = time.perf_counter(), time.process_time()
    result, metrics = asyncio.run(
        arun_multi_turn_rollout(engine, batch, {"turns": Turns}, max_seq_len=4096, free_running=free_running)
    )
    assert result["total_reward"] == [1.0] * samples and metrics["retokenization_mismatches"] == 0
    return time.perf_counter() - wall, time.process_time() - cpu, engine.sleeping


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--low", type=float, default=0.005)
    parser.add_argument("--high", type=float, default=0.05)
    arguments = parser.parse_args()
    Turns.turns = arguments.turns
    table = latencies(arguments.samples, arguments.turns, arguments.low, arguments.high)
    per_sample = [
        sum(list(table.values())[i * arguments.turns : (i + 1) * arguments.turns]) for i in range(arguments.samples)
    ]
    print(f"{arguments.samples} samples x {arguments.turns} turns, latency {arguments.low}-{arguments.high} s per turn")
    waves = measure(arguments.samples, table, free_running=False)
    free = measure(arguments.samples, table, free_running=True)
    for label, (wall, cpu, _) in (("waves", waves), ("free-running", free)):
        print(f"{label:14} wall {wall:6.2f} s  cpu {cpu:6.2f} s")
    print(f"free-running vs waves: {waves[0] / free[0]:.2f}x faster (wall)")
    print(
        f"floor: the slowest sample's own latency {max(per_sample):.2f} s; free-running wall / floor "
        f"{free[0] / max(per_sample):.2f}"
    )
    turns = arguments.samples * arguments.turns
    print(
        f"loop CPU per turn (free-running): {free[1] / turns * 1e3:.2f} ms vs mean generation "
        f"{sum(table.values()) / len(table) * 1e3:.1f} ms = {free[1] / sum(table.values()) * 100:.1f} %"
    )


if __name__ == "__main__":
    main()
