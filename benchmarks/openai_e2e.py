"""End to end through the OpenAI-compatible adapter: CPU per rollout in our process, with a profile.

2,000 single-turn rollouts of ``toy/arith-v0`` at concurrency 256 run through ``rg.arun`` (run
file included) with the ``openai`` policy against ``ChatCompletionsServer`` on 127.0.0.1 in its
own process (spawned), answering at once. Only this process's CPU is counted
(``time.process_time``: every thread of this process, none of the server's). Printed:

* CPU milliseconds per rollout, the median of ``--repeats`` timed runs (target <= 1 ms);
* the floor: the same number of requests (the same body the adapter sends) posted by bare
  ``aiohttp`` coroutines with ``json.loads`` of each answer, no engine, no env, no run file,
  measured in the same run, and the ratio to it;
* a cProfile breakdown (CPU timer) of one more run by area: the HTTP client and its pool,
  JSON (serialising requests and run-file lines, parsing answers), records (building
  trajectories and encoding them as strict JSON), the run file, the engine, the LLM policy,
  the env, the event loop. Time in C functions (``len``, ``isinstance``, socket calls...) is
  charged to the area of the Python function that called them.

Target (issue 19): <= 1 ms of CPU per rollout.

``--httpx`` sends through the core's httpx ``JSONClient`` instead (the adapter's transport
before it moved to aiohttp), for a before/after on the same machine.

    python benchmarks/openai_e2e.py [--rollouts 2000] [--concurrency 256] [--repeats 3] [--httpx]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import math
import pstats
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from openai_concurrency import server_process

AREAS = (
    (
        "HTTP client + pool",
        (
            "aiohttp",
            "yarl",
            "multidict",
            "propcache",
            "frozenlist",
            "aiosignal",
            "httpx",
            "httpcore",
            "h11",
            "anyio",
            "sniffio",
            "ssl.py",
            "socket.py",
            "selectors",
            "rolloutgym/llm/http.py",
            "rolloutgym_openai/_http.py",
        ),
    ),
    ("JSON", ("json/", "pydantic_core")),
    ("records", ("rolloutgym_protocol/records", "rolloutgym_protocol/scores", "rolloutgym_protocol/jsonvalues")),
    ("run file", ("rolloutgym/runs", "rolloutgym/runner")),
    ("engine", ("rolloutgym/rollouts", "rolloutgym/executors", "rolloutgym/sources", "rolloutgym_protocol/")),
    ("LLM policy", ("rolloutgym/llm", "rolloutgym_openai")),
    ("env", ("rolloutgym/builtin",)),
    ("event loop", ("asyncio",)),
)
_JSON_BUILTINS = ("pydantic_core", "json", "_json")


def area_of(function: tuple[str, int, str]) -> str | None:
    """The area of a profiled function; None for a C function (charged to its callers)."""
    filename, _, name = function
    if filename == "~":
        return "JSON" if any(part in name for part in _JSON_BUILTINS) else None
    for area, needles in AREAS:
        if any(needle in filename for needle in needles):
            return area
    return "other"


def breakdown(profile: cProfile.Profile) -> dict[str, float]:
    """Own CPU seconds by area; a C function's time goes to the areas of its Python callers."""
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = defaultdict(float)
    for function, (_, _, own, _, callers) in stats.items():
        area = area_of(function)
        if area is not None:
            totals[area] += own
            continue
        for caller, caller_stats in callers.items():  # caller_stats: (calls, primitive calls, own, cumulative)
            totals[area_of(caller) or "C called from C"] += caller_stats[2]
    return totals


async def one_run(url: str, rollouts: int, concurrency: int, out: Path, httpx: bool = False) -> int:
    import rolloutgym as rg
    from rolloutgym.llm.http import JSONClient
    from rolloutgym.runner import RunConfig, arun
    from rolloutgym_openai import make_policy

    tasks = len(rg.load("toy/arith-v0"))
    per_task = math.ceil(rollouts / tasks)
    policy = make_policy("bench-model", base_url=url, max_concurrency=concurrency)
    if httpx:
        client = policy.client
        policy.client = JSONClient(url, max_concurrency=concurrency, retry=client.retry, timeout=client.timeout)
    config = RunConfig(
        env="toy/arith-v0", policy="openai:bench-model", num_rollouts=per_task, concurrency=concurrency, out=out
    )
    result = await arun(config, policy=policy)
    if result.summary.num_errors:
        raise SystemExit(f"rollouts failed: {result.summary.error_examples}")
    return result.summary.num_trajectories


def request_body() -> dict[str, Any]:
    """The body the adapter sends for the first turn of toy/arith-v0's first task."""
    import rolloutgym as rg
    from rolloutgym.llm import SamplingParams, observation_messages
    from rolloutgym_openai import make_policy

    environment = rg.make("toy/arith-v0", task=0)
    observation, _ = environment.reset(seed=0)
    policy = make_policy("bench-model", base_url="http://127.0.0.1:9/v1")
    params = SamplingParams(max_tokens=policy.max_tokens, temperature=policy.temperature)
    return policy.request_body(list(observation_messages(observation)), (), params)


async def bare_requests(url: str, count: int, concurrency: int, body: dict[str, Any]) -> None:
    """``count`` POSTs by bare aiohttp coroutines, ``concurrency`` at a time: the floor."""
    import aiohttp

    payload = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    limit = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def one() -> None:
            async with limit, session.post(url + "/chat/completions", data=payload, headers=headers) as response:
                json.loads(await response.read())

        await asyncio.gather(*(one() for _ in range(count)))


def cpu_per_item(run: Any, repeats: int) -> tuple[float, float]:
    """Median CPU seconds per item and median wall seconds of ``repeats`` calls of ``run() -> items``."""
    cpu_each, walls = [], []
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        count = run()
        cpu_each.append((time.process_time() - cpu) / count)
        walls.append(time.perf_counter() - wall)
    return statistics.median(cpu_each), statistics.median(walls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--httpx", action="store_true", help="send through the core's httpx JSONClient")
    options = parser.parse_args()
    body = request_body()
    with server_process(0.0) as url, tempfile.TemporaryDirectory() as folder:
        runs = iter(range(1_000_000))

        def ours() -> int:
            out = Path(folder) / f"run-{next(runs)}.jsonl"
            return asyncio.run(one_run(url, options.rollouts, options.concurrency, out, options.httpx))

        def floor() -> int:
            asyncio.run(bare_requests(url, options.rollouts, options.concurrency, body))
            return options.rollouts

        asyncio.run(one_run(url, 256, options.concurrency, Path(folder) / "warm.jsonl", options.httpx))  # imports
        floor()
        floor_cpu, _ = cpu_per_item(floor, options.repeats)
        cpu, wall = cpu_per_item(ours, options.repeats)
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        ours()
        profile.disable()
    print(
        f"{options.rollouts} rollouts of toy/arith-v0 at concurrency {options.concurrency} "
        f"({'httpx' if options.httpx else 'aiohttp'} transport), median of {options.repeats}: "
        f"wall {wall:.2f} s (the server shares this machine)"
    )
    print(f"CPU in this process: {cpu * 1000:.3f} ms per rollout (target <= 1 ms)")
    print(
        f"floor (bare aiohttp POST + json.loads, same body): {floor_cpu * 1000:.3f} ms per request; "
        f"rolloutgym / floor = {cpu / floor_cpu:.2f}x"
    )
    totals = breakdown(profile)
    whole = sum(totals.values()) or 1.0
    print("profile (CPU by area under cProfile, C functions charged to their callers; ms per rollout scaled):")
    for name, seconds in sorted(totals.items(), key=lambda pair: -pair[1]):
        print(f"  {name:<20} {100 * seconds / whole:5.1f} %  {cpu * 1000 * seconds / whole:6.3f} ms")


if __name__ == "__main__":
    main()
