"""The trainer-facing batch API: batched waves vs one request at a time, and loop overhead.

``hf:tiny`` on CPU, a batch of ``--samples`` (64) samples spread over three envs
(``toy/guess-v0``, ``sql/shop-v0``, ``workflow/refund-v0``), ``--turns`` (4) assistant
turns each, sampling at temperature 1 with per-sample seeds (so every side samples the
same tokens). Three measurements on the same episodes:

1. **batched**: ``run_multi_turn_rollout`` with ``TransformersBatchSampler`` (one padded
   batch per wave); the number of generation calls must equal the number of waves;
2. **one at a time**: each episode through ``arollout`` + ``TokenPolicy`` over the
   per-request ``TransformersSampler``, one after the other (one model call per turn);
3. **direct**: the batched generator called straight on the prompts and params the loop
   sent it, wave by wave (the same work without envs, rendering, parsing or records).

Speed-up = one-at-a-time / batched. Loop overhead per wave = (batched - generation) / waves,
relative to generation / waves (target <= 5 %), with generation measured two ways: the
time spent inside the ``generate`` calls of the same run (no run-to-run noise), and the
direct replay (3). Wall and CPU time are both printed: on a shared machine wall time
includes waiting for cores, and CPU time (this process; the generation thread's own CPU
for the time inside ``generate``) is the steadier figure.

hf:tiny samples gibberish, which ends every chat episode at its first reply (an answer
without a tool call). So that episodes last ``--turns`` turns as real agent episodes do,
each env is wrapped in ``KeepCalling``: a reply without a tool call becomes a call of the
env's first tool with no arguments (the env answers: a schema, or a tool error), and the
episode goes on until the turn budget ends it (``stop_reason="max_steps"``). The envs do
their real work on every step.

Last, the free-running schedule (``run_async_multi_turn_rollout``) against waves with a
model whose latency varies per sample (the measurement of ``free_running.py``).

    python benchmarks/batch_rollout.py [--samples 64] [--turns 4] [--max-tokens 32]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import gymnasium as gym
import rolloutgym as rg
from rolloutgym.llm import ChatTemplateRenderer, SamplingParams, TokenPolicy, env_tools, run_multi_turn_rollout
from rolloutgym.rollouts import arollout
from rolloutgym_transformers import TransformersBatchSampler, make_policy

ENVS = {"guess": "toy/guess-v0", "sql": "sql/shop-v0", "refund": "workflow/refund-v0"}


class KeepCalling(gym.ActionWrapper):
    """Turns a reply without tool calls into a call of the env's first tool (no arguments)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.tools = env_tools(env)
        self.first_tool = self.tools[0]["function"]["name"]

    def action(self, action: dict[str, Any]) -> dict[str, Any]:
        if action.get("tool_calls"):
            return action
        call = {"id": "forced", "name": self.first_tool, "arguments": {}}
        return {**action, "tool_calls": [call]}


def make_env(name: str) -> Any:
    return lambda task: KeepCalling(rg.make(ENVS[name], task=task))


TASK_TO_ENV = {name: make_env(name) for name in ENVS}


def batch_of(count: int) -> list[dict[str, Any]]:
    names = list(ENVS)
    return [{"task_name": names[index % 3], "task": index // 3, "sample": index} for index in range(count)]


class Recording:
    """The batched generator, remembering each wave it was given."""

    def __init__(self, inner: TransformersBatchSampler) -> None:
        self.inner = inner
        self.renderer = inner.renderer
        self.pad_token_id = inner.pad_token_id
        self.waves: list[tuple[list[tuple[int, ...]], list[SamplingParams]]] = []
        self.wall = self.cpu = 0.0  # time spent inside generate (hf:tiny computes on this one thread)

    def generate(self, prompts: Any, params: Any) -> Any:
        self.waves.append(([tuple(prompt) for prompt in prompts], list(params)))
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return self.inner.generate(prompts, params)
        finally:
            self.wall += time.perf_counter() - wall
            self.cpu += time.thread_time() - cpu


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    now = clocks()
    return now[0] - start[0], now[1] - start[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=32)
    arguments = parser.parse_args()
    policy = make_policy("tiny", max_tokens=arguments.max_tokens)
    batcher = Recording(policy.sampler.batch_sampler(policy.renderer))
    samples = batch_of(arguments.samples)
    options = {
        "max_seq_len": 4096,
        "max_rollout_turns": arguments.turns,
        "max_tokens": arguments.max_tokens,
        "seed": 0,
    }
    run_multi_turn_rollout(batcher, samples[:3], TASK_TO_ENV, **options)  # warm-up: plugins, task lists
    batcher.waves.clear()
    batcher.wall = batcher.cpu = 0.0
    tokenizer = policy.loaded.tokenizer
    batcher.renderer = ChatTemplateRenderer(tokenizer)  # fresh renderers: no run reuses another's cache

    start = clocks()
    batch, metrics = run_multi_turn_rollout(batcher, samples, TASK_TO_ENV, **options)
    batched = since(start)
    waves = list(batcher.waves)

    start = clocks()
    for prompts, params in waves:
        batcher.inner.generate(prompts, params)
    direct = since(start)

    single = TokenPolicy(
        policy.sampler,
        ChatTemplateRenderer(tokenizer),
        max_tokens=arguments.max_tokens,
        max_seq_len=4096,
        max_turns=arguments.turns,
        seed=0,
    )
    start = clocks()
    alone = one_at_a_time(single, samples, arguments.turns)
    sequential = since(start)

    report(arguments, samples, batch, metrics, alone, len(waves))
    timings(batched, sequential, direct, inside=(batcher.wall, batcher.cpu), count=len(waves))
    assert metrics["generation_calls"] == len(waves), "one generation call per wave"


def one_at_a_time(single: TokenPolicy, samples: list[dict[str, Any]], turns: int) -> list[Any]:
    """Each episode through ``arollout`` over the per-request sampler, one after the other."""
    alone = []
    for sample in samples:
        environment = TASK_TO_ENV[sample["task_name"]](sample["task"])
        alone.append(asyncio.run(arollout(environment, single, max_steps=turns + 1)))
        environment.close()
    return alone


def report(
    arguments: Any, samples: list[Any], batch: Any, metrics: dict[str, Any], alone: list[Any], count: int
) -> None:
    """What ran: waves, calls, turns, and whether batched and alone sampled the same tokens."""
    requests = sum(1 for trajectory in alone for step in trajectory.steps if step.policy_tokens)
    same = sum(
        [step.policy_tokens for step in mine.steps] == [step.policy_tokens for step in theirs.steps]
        for mine, theirs in zip(batch.trajectories, alone, strict=True)
    )
    print(
        f"samples {len(samples)} over {', '.join(ENVS.values())}; {arguments.turns} turns; hf:tiny seeded sampling, "
        f"max_tokens {arguments.max_tokens}"
    )
    print(
        f"waves {count} (sizes {metrics['wave_sizes']}); generation calls {metrics['generation_calls']}; "
        f"per-request calls one at a time {requests}; turns {metrics['total_turns']}"
    )
    print(
        f"mean prompt tokens per turn {sum(metrics['histogram/input_tokens_length']) / metrics['total_turns']:.0f}; "
        f"identical tokens batched vs alone: {same}/{len(samples)}; "
        f"retokenization mismatches {metrics['retokenization_mismatches']}"
    )


def timings(
    batched: tuple[float, float],
    sequential: tuple[float, float],
    direct: tuple[float, float],
    *,
    inside: tuple[float, float],
    count: int,
) -> None:
    """Wall and CPU seconds of the three sides, the speed-up, and the loop overhead per wave (one generation call)."""
    print(f"{'':24}{'wall s':>10}{'cpu s':>10}")
    for label, (wall, cpu) in (
        ("batched waves", batched),
        ("one request at a time", sequential),
        ("direct generate", direct),
    ):
        print(f"{label:24}{wall:>10.2f}{cpu:>10.2f}")
    print(
        f"speed-up batched vs one at a time: wall {sequential[0] / batched[0]:.2f}x, "
        f"cpu {sequential[1] / batched[1]:.2f}x"
    )
    for label, index in (("wall", 0), ("cpu", 1)):
        overhead = (batched[index] - inside[index]) / count
        print(
            f"loop overhead per wave ({label}, same run): {overhead * 1000:.1f} ms besides "
            f"{inside[index] / count * 1000:.1f} ms inside generate = {overhead / (inside[index] / count) * 100:.1f} %"
        )
    for label, index in (("wall", 0), ("cpu", 1)):
        overhead = (batched[index] - direct[index]) / count
        print(
            f"loop overhead per wave ({label}, vs the direct replay): {overhead * 1000:.1f} ms on "
            f"{direct[index] / count * 1000:.1f} ms of generation = {overhead / (direct[index] / count) * 100:.1f} %"
        )


def free_running_section(samples: int, turns: int) -> None:
    """Free-running vs wave-synchronised under per-sample latency (``free_running.py``, same numbers)."""
    import free_running

    free_running.Turns.turns = turns
    table = free_running.latencies(samples, turns, 0.005, 0.05)
    waves = free_running.measure(samples, table, free_running=False)
    free = free_running.measure(samples, table, free_running=True)
    print(
        f"free-running vs waves ({samples} x {turns} turns, scripted model, latency 5-50 ms per sample and turn): "
        f"{waves[0] / free[0]:.2f}x faster (wall {waves[0]:.2f} s vs {free[0]:.2f} s); loop CPU "
        f"{free[1] / sum(table.values()) * 100:.1f} % of generation"
    )


if __name__ == "__main__":
    main()
    free_running_section(64, 4)
