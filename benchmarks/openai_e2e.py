"""End to end through the OpenAI-compatible adapter: CPU per rollout in our process, with a profile.

2,000 single-turn rollouts of ``toy/arith-v0`` at concurrency 256 run through ``rg.arun`` (run
file included) with the ``openai`` policy against ``ChatCompletionsServer`` on 127.0.0.1 in its
own process, answering at once. Printed: CPU milliseconds per rollout spent in this process
(``time.process_time``), and a cProfile breakdown of that CPU by area (HTTP client and its
connection pool, JSON, records, the run file, the event loop, the env, the rest).

Target (issue 19): <= 1 ms of CPU per rollout.

    python benchmarks/openai_e2e.py [--rollouts 2000] [--concurrency 256]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import math
import pstats
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from openai_concurrency import server_process

AREAS = (
    ("HTTP client + pool", ("httpx", "httpcore", "h11", "anyio", "sniffio", "ssl", "socket", "selectors")),
    ("JSON", ("json",)),
    ("run file", ("rolloutgym/runs", "rolloutgym/runner")),
    (
        "records",
        (
            "rolloutgym_protocol/records",
            "rolloutgym_protocol/scores",
            "rolloutgym_protocol/jsonvalues",
            "rolloutgym_protocol/policies",
        ),
    ),
    ("engine", ("rolloutgym/rollouts", "rolloutgym/executors", "rolloutgym/sources")),
    ("LLM policy + parsing", ("rolloutgym/llm", "rolloutgym_openai")),
    ("env", ("rolloutgym/builtin",)),
    ("event loop", ("asyncio",)),
)


def area_of(filename: str) -> str:
    if filename == "~":
        return "C builtins (called from all areas)"
    for name, needles in AREAS:
        if any(needle in filename for needle in needles):
            return name
    return "other"


async def one_run(url: str, rollouts: int, concurrency: int, out: Path) -> int:
    import rolloutgym as rg
    from rolloutgym.runner import RunConfig, arun
    from rolloutgym_openai import make_policy

    tasks = len(rg.load("toy/arith-v0"))
    per_task = math.ceil(rollouts / tasks)
    policy = make_policy("bench-model", base_url=url, max_concurrency=concurrency)
    config = RunConfig(
        env="toy/arith-v0", policy="openai:bench-model", num_rollouts=per_task, concurrency=concurrency, out=out
    )
    result = await arun(config, policy=policy)
    if result.summary.num_errors:
        raise SystemExit(f"rollouts failed: {result.summary.error_examples}")
    return result.summary.num_trajectories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=256)
    options = parser.parse_args()
    with server_process(0.0) as url, tempfile.TemporaryDirectory() as folder:
        asyncio.run(one_run(url, 256, options.concurrency, Path(folder) / "warm.jsonl"))  # imports, connections
        cpu, wall = time.process_time(), time.perf_counter()
        count = asyncio.run(one_run(url, options.rollouts, options.concurrency, Path(folder) / "timed.jsonl"))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        profile = cProfile.Profile()
        profile.enable()
        asyncio.run(one_run(url, options.rollouts, options.concurrency, Path(folder) / "profiled.jsonl"))
        profile.disable()
    print(f"{count} rollouts of toy/arith-v0 at concurrency {options.concurrency}: wall {wall:.2f} s")
    print(f"CPU in this process: {cpu * 1000 / count:.3f} ms per rollout (target <= 1 ms)")
    totals: dict[str, float] = defaultdict(float)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    for (filename, _, _), (_, _, own, _, _) in stats.items():
        totals[area_of(filename)] += own
    whole = sum(totals.values()) or 1.0
    print("profile (own time by area, under cProfile):")
    for name, seconds in sorted(totals.items(), key=lambda pair: -pair[1]):
        print(f"  {name:<22} {100 * seconds / whole:5.1f} %")


if __name__ == "__main__":
    main()
