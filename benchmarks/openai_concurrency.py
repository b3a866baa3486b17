"""Concurrent LLM rollouts against a local OpenAI-compatible server with a fixed latency.

N episodes of ``toy/guess-v0`` (T turns each) run at once through the ``openai`` policy
against ``ChatCompletionsServer`` on 127.0.0.1 (its own process), which waits ``latency`` seconds before
every answer. If the adapter and the engine add nothing, the wall time is the ideal
``T * latency`` (every episode waits on its own requests in parallel). Printed:

* ``rolloutgym / ideal`` — the target is <= 1.3;
* ``raw aiohttp / ideal`` — the same requests sent by bare ``aiohttp`` coroutines (the
  floor this machine and the stdlib server allow), measured in the same run.

    python benchmarks/openai_concurrency.py [--episodes 32] [--turns 4] [--latency 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager

import aiohttp
from rolloutgym.registry import get_registry
from rolloutgym.rollouts import arollout_group
from rolloutgym_openai import make_policy
from rolloutgym_openai.testing import ChatCompletionsServer


async def rolloutgym_wall(url: str, episodes: int, turns: int) -> float:
    policy = make_policy("bench-model", base_url=url, max_concurrency=episodes, max_retries=0)
    started = time.perf_counter()
    group = await arollout_group(
        0,
        lambda task: get_registry().make("toy/guess-v0", task=task),
        policy,
        num_rollouts=episodes,
        concurrency=episodes,
        max_steps=turns,
    )
    wall = time.perf_counter() - started
    if group.errors:
        raise SystemExit(f"rollouts failed: {[error.error_message for error in group.errors]}")
    steps = [len(trajectory.steps) for trajectory in group.trajectories]
    if min(steps) != turns:
        raise SystemExit(f"expected {turns} turns per episode, got {steps}")
    return wall


async def raw_wall(url: str, episodes: int, turns: int) -> float:
    body = {
        "model": "bench-model",
        "messages": [{"role": "user", "content": "guess"}],
        "tools": get_registry().make("toy/guess-v0").tools,
    }
    connector = aiohttp.TCPConnector(limit=episodes)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as client:

        async def episode() -> None:
            for _ in range(turns):
                async with client.post(url + "/chat/completions", json=body) as response:
                    response.raise_for_status()
                    await response.read()

        started = time.perf_counter()
        await asyncio.gather(*(episode() for _ in range(episodes)))
        return time.perf_counter() - started


def _serve(latency: float, port_queue: multiprocessing.Queue, stop: multiprocessing.Event) -> None:  # type: ignore[type-arg]
    with ChatCompletionsServer(latency=latency) as server:
        port_queue.put(server.url)
        stop.wait()


@contextmanager
def server_process(latency: float) -> Iterator[str]:
    """The server in its own process, so that it does not share the client's GIL."""
    context = multiprocessing.get_context("spawn")
    urls, stop = context.Queue(), context.Event()
    process = context.Process(target=_serve, args=(latency, urls, stop), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=60)
    finally:
        stop.set()
        process.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    ideal = options.turns * options.latency
    ours, raw = [], []
    with server_process(options.latency) as url:
        asyncio.run(rolloutgym_wall(url, options.episodes, options.turns))  # warm-up (imports, first connections)
        for _ in range(options.repeats):
            raw.append(asyncio.run(raw_wall(url, options.episodes, options.turns)))
            ours.append(asyncio.run(rolloutgym_wall(url, options.episodes, options.turns)))
    ours_median, raw_median = statistics.median(ours), statistics.median(raw)
    print(
        f"{options.episodes} episodes x {options.turns} turns, {options.latency * 1000:.0f} ms per request; "
        f"ideal {ideal:.3f} s; median of {options.repeats}"
    )
    print(f"raw aiohttp    {raw_median:.3f} s   raw aiohttp / ideal = {raw_median / ideal:.2f}x")
    print(f"rolloutgym     {ours_median:.3f} s   rolloutgym / ideal  = {ours_median / ideal:.2f}x  (target <= 1.30x)")
    print(f"rolloutgym / raw aiohttp = {ours_median / raw_median:.2f}x")


if __name__ == "__main__":
    main()
