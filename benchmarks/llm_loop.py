"""Per-turn overhead of the token-exact LLM loop against calling the same sampler directly.

Runs ``toy/guess-v0`` and ``toy/arith-v0`` episodes with the ``hf:tiny`` model on CPU
through ``arollout`` + ``TokenPolicy`` (rendering, sampling, parsing, env step, provenance
check, records), then replays exactly the same prompts straight into the sampler. Greedy
decoding makes both sides sample the same tokens. Rounds alternate loop/direct and the
medians are compared.

    python benchmarks/llm_loop.py [--episodes 12] [--rounds 7] [--max-tokens 32] [--group-size 1]

Target: loop / direct <= 1.05.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from rolloutgym.builtin.toy import ArithmeticEnv, GuessNumberEnv, arith_tasks, guess_tasks
from rolloutgym.llm import SamplingParams, TokenPolicy, metrics
from rolloutgym.rollouts import arollout
from rolloutgym_transformers import TransformersSampler, load_model
from rolloutgym_transformers.policy import TransformersPolicy


class RecordingSampler(TransformersSampler):
    """The same sampler, remembering each (prompt, params) it was given."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[tuple[int, ...], SamplingParams]] = []

    async def sample(self, prompt_token_ids, params):  # type: ignore[override]
        self.calls.append((tuple(prompt_token_ids), params))
        return await super().sample(prompt_token_ids, params)


GROUP_SIZE = 1


def environments(count: int) -> list[Any]:
    """``count`` episodes, alternating guess and arith tasks, ``GROUP_SIZE`` episodes per task."""
    guess, arith = guess_tasks(), arith_tasks()
    tasks = [index // GROUP_SIZE for index in range(count)]
    return [
        GuessNumberEnv(guess[task % len(guess)]) if task % 2 == 0 else ArithmeticEnv(arith[task % len(arith)])
        for task in tasks
    ]


def clocks() -> tuple[float, float]:
    """Wall time, and CPU time of this process (all threads): the CPU figure is what the
    loop costs even on a machine shared with other work."""
    return time.perf_counter(), time.process_time()


async def run_loop(policy: TokenPolicy, count: int) -> tuple[tuple[float, float], list[Any]]:
    envs = environments(count)
    wall, cpu = clocks()
    trajectories = [await arollout(environment, policy, seed=0, max_steps=4) for environment in envs]
    return (time.perf_counter() - wall, time.process_time() - cpu), trajectories


async def run_direct(
    sampler: TransformersSampler, calls: list[tuple[tuple[int, ...], SamplingParams]]
) -> tuple[float, float]:
    wall, cpu = clocks()
    for prompt, params in calls:
        await sampler.sample(prompt, params)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--group-size", type=int, default=1, help="episodes per task (RL runs use 4-16)")
    arguments = parser.parse_args()
    global GROUP_SIZE
    GROUP_SIZE = arguments.group_size
    import torch

    torch.set_num_threads(arguments.threads)
    loaded = load_model("tiny", device="cpu")
    template = TransformersPolicy("tiny", device="cpu")  # for its renderer
    sampler = RecordingSampler(loaded.model, loaded.tokenizer, device="cpu")
    policy = TokenPolicy(sampler, template.renderer, max_tokens=arguments.max_tokens, greedy=True, max_seq_len=4096)
    asyncio.run(run_loop(policy, arguments.episodes))  # warm-up, and the prompts to replay
    calls = list(sampler.calls)
    asyncio.run(run_direct(sampler, calls))
    loop_times, direct_times = [], []
    trajectories: list[Any] = []
    for _ in range(arguments.rounds):
        sampler.calls.clear()
        elapsed, trajectories = asyncio.run(run_loop(policy, arguments.episodes))
        loop_times.append(elapsed)
        assert [prompt for prompt, _ in sampler.calls] == [prompt for prompt, _ in calls], "greedy replay diverged"
        direct_times.append(asyncio.run(run_direct(sampler, calls)))
    summary = metrics(trajectories)
    turns = len(calls)
    print(
        f"hf:tiny on CPU ({arguments.threads} torch thread), {arguments.episodes} episodes ({arguments.group_size} "
        f"per task), {turns} turns, "
        f"<= {arguments.max_tokens} tokens/turn, median of {arguments.rounds} rounds"
    )
    print(
        f"mean prompt+observation tokens per sample: {summary['mean_env_tokens_per_sample']:.0f}; generated: "
        f"{summary['mean_gen_tokens_per_sample']:.1f}"
    )
    for index, clock in enumerate(("wall", "cpu")):
        loop = statistics.median(times[index] for times in loop_times)
        direct = statistics.median(times[index] for times in direct_times)
        print(
            f"{clock:4}: direct sampler {direct * 1000 / turns:.2f} ms/turn, loop {loop * 1000 / turns:.2f} ms/turn, "
            f"overhead {(loop - direct) * 1000 / turns:.3f} ms/turn, ratio loop/direct = {loop / direct:.3f} (target "
            "<= 1.05)"
        )
    print(f"retokenization_mismatches: {summary['retokenization_mismatches']}")


if __name__ == "__main__":
    main()
