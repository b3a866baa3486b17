"""The full MiniWoB++ pass (``browser/miniwob-v0``) and episode start time, pooled vs fresh context.

1. Null policy on all 125 tasks (seed 0): every page starts (utterance shown) and scores the
   page's failure reward, -1.
2. The scripted oracle on its subset, ``--seeds`` seeds each: the page's reward (1.0 expected).
3. Episode start (``env.reset``: context, page load, seeded ``core.startEpisodeReal()``, first
   observation) with pooling (a context prepared in the background with the task page
   already loaded, from the previous episode of the task) against a fresh context created
   on demand (``browser.new_context()`` + ``new_page()`` + loading the page), on the same
   browser. The two modes alternate task by task; medians are compared.

Usage: ``python benchmarks/miniwob_pass.py [--seeds 5] [--start-tasks 30]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from rolloutgym_browser import _miniwob_page
from rolloutgym_browser._browser_pool import BrowserPool
from rolloutgym_browser._miniwob_oracle import SCRIPTED
from rolloutgym_browser._service import shutdown_browser
from rolloutgym_browser.miniwob import make_miniwob_env, miniwob_tasks
from rolloutgym_testing import run_episode

ENV_ID = "browser/miniwob-v0"


def null_pass() -> tuple[dict[str, float], list[str], float]:
    rewards: dict[str, float] = {}
    problems: list[str] = []
    started = time.perf_counter()
    for task in miniwob_tasks():
        try:
            trajectory = run_episode(ENV_ID, "null", task=task.id, seed=0)
        except Exception as exc:  # a page that does not start is a finding, not the end of the pass
            problems.append(f"{task.id}: {type(exc).__name__}: {exc}")
            continue
        rewards[task.id] = trajectory.score.value
        first = trajectory.initial_observation
        if not str(first[1]["content"]).startswith("Task: ") or len(str(first[1]["content"])) < 12:
            problems.append(f"{task.id}: no instruction in the first observation")
    return rewards, problems, time.perf_counter() - started


def oracle_pass(seeds: int) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    for task in sorted(SCRIPTED):
        results[task] = [run_episode(ENV_ID, "oracle", task=task, seed=seed).score.value for seed in range(seeds)]
    return results


async def _reset_seconds(task: str, seed: int) -> float:
    environment = make_miniwob_env(task)
    try:
        started = time.perf_counter()
        await environment.reset(seed=seed)
        elapsed = time.perf_counter() - started
        await environment.step({"role": "assistant", "content": ""})
        return elapsed
    finally:
        await environment.close()


def start_times(count: int) -> tuple[list[float], list[float]]:
    tasks = [task.id for task in miniwob_tasks()][:: max(1, 125 // count)][:count]
    pooled_acquire = BrowserPool.acquire
    pooled_prepare = BrowserPool.prepare_spare
    take_ready, prepare_next = _miniwob_page.take_ready, _miniwob_page.prepare_next

    async def no_ready(pool: Any, key: Any) -> None:
        return None

    async def fresh_acquire(self: BrowserPool) -> tuple[Any, Any]:
        browser = await self._ensure_browser()
        context = await browser.new_context(viewport={"width": 1024, "height": 768}, service_workers="block")
        self.open_contexts += 1
        return context, await context.new_page()

    pooled: list[float] = []
    fresh: list[float] = []
    asyncio.run(_reset_seconds(tasks[0], 0))  # launch the browser first
    for index, task in enumerate(tasks):
        for mode in ("pooled", "fresh") if index % 2 == 0 else ("fresh", "pooled"):
            if mode == "fresh":
                BrowserPool.acquire = fresh_acquire  # type: ignore[method-assign]
                BrowserPool.prepare_spare = lambda self: None  # type: ignore[method-assign]
                _miniwob_page.take_ready = no_ready  # type: ignore[assignment]
                _miniwob_page.prepare_next = lambda *arguments: None  # type: ignore[assignment]
            try:
                # One warm-up episode in this mode (its spare context, or none), then the measured one.
                asyncio.run(_reset_seconds(task, 1))
                seconds = asyncio.run(_reset_seconds(task, 2))
            finally:
                BrowserPool.acquire = pooled_acquire  # type: ignore[method-assign]
                BrowserPool.prepare_spare = pooled_prepare  # type: ignore[method-assign]
                _miniwob_page.take_ready, _miniwob_page.prepare_next = take_ready, prepare_next
            (pooled if mode == "pooled" else fresh).append(seconds)
    return pooled, fresh


def passes(seeds: int) -> None:
    """The null pass over all tasks and the scripted oracle pass, printed."""
    rewards, problems, seconds = null_pass()
    minus_one = sum(1 for value in rewards.values() if value == -1.0)
    print(
        f"null pass: {len(rewards)}/125 tasks ran, {minus_one} scored -1, {len(problems)} problem(s), {seconds:.1f} s"
    )
    for problem in problems:
        print("  ", problem)
    results = oracle_pass(seeds)
    solved = sum(value == 1.0 for values in results.values() for value in values)
    total = sum(len(values) for values in results.values())
    print(f"scripted oracle: {solved}/{total} episodes scored 1.0 on {len(results)} tasks x {seeds} seeds")
    for task, values in results.items():
        if any(value != 1.0 for value in values):
            print(f"   {task}: {values}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="oracle seeds per scripted task")
    parser.add_argument("--start-tasks", type=int, default=30, help="tasks timed for the start comparison")
    parser.add_argument("--start-only", action="store_true", help="only the start-time comparison")
    options = parser.parse_args()
    try:
        if not options.start_only:
            passes(options.seeds)
        pooled, fresh = start_times(options.start_tasks)
        pooled_median, fresh_median = statistics.median(pooled), statistics.median(fresh)
        print(f"episode start, pooled context: median {pooled_median * 1000:.0f} ms over {len(pooled)} tasks")
        print(f"episode start, fresh context:  median {fresh_median * 1000:.0f} ms over {len(fresh)} tasks")
        print(f"pooled / fresh start time: {pooled_median / fresh_median:.2f}x")
    finally:
        shutdown_browser()


if __name__ == "__main__":
    main()
