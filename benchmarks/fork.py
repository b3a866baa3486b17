"""Forking an episode: the cost of ``fork()`` per env family against building a fresh env and
replaying the prefix (the only way to branch without fork), the memory a fork takes, and a
1,000-leaf rollout tree on ``workflow/refund-v2`` against 1,000 independent episodes.

    python benchmarks/fork.py                 # every family, prefix of 10 steps, median of 15
    python benchmarks/fork.py --repeats 5 --families workflow,sql

Each family's prefix is 10 real steps of its first task (lookups, SQL statements, page
actions, file reads); the baseline (make + reset + replay the 10 steps) is measured in the
same run, interleaved with the fork. Target (issue 47): fork <= 0.2x the baseline for SQL
and workflow at a 10-step prefix.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import rolloutgym as rg
from rolloutgym_protocol import afork, asnapshot


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": name, "arguments": arguments}]}


def _workflow() -> list[Any]:
    first = rg.make("workflow/refund-v2", task=0).oracle_action()  # a customer lookup
    return [first] * 10


def _sql() -> list[Any]:
    read = call("run_sql", sql="SELECT COUNT(*) FROM orders")
    write = call("run_sql", sql="UPDATE orders SET status = 'cancelled' WHERE order_id = 202")
    return [read, write] * 5


def _browser() -> list[Any]:
    actions = [call("click", element_id="nav-account")]
    actions += [call("type", element_id="account-name", text=f"Sam {number}") for number in range(9)]
    return actions


def _code() -> list[Any]:
    return [call("list_files")] * 5 + [call("read_file", path="README.md")] * 5


# family: (env id, env kwargs, prefix actions)
FAMILIES: dict[str, tuple[str, dict[str, Any], Callable[[], list[Any]]]] = {
    "workflow": ("workflow/refund-v2", {}, _workflow),
    "sql": ("sql/shop-ops-v0", {}, _sql),
    "sql-duckdb": ("sql/shop-ops-v0", {"backend": "duckdb"}, _sql),
    "browser-dom": ("browser/shop-v0", {}, _browser),
    "browser-chromium": ("browser/shop-v0", {"backend": "chromium"}, _browser),
    "code": ("code/pybugs-v0", {}, _code),
    "math": ("bench/gsm8k-v0", {}, lambda: []),
}


async def _started(env_id: str, kwargs: dict[str, Any], prefix: list[Any]) -> Any:
    env = rg.make_async(env_id, task=0, **kwargs)
    await env.reset(seed=0)
    for action in prefix:
        await env.step(action)
    return env


async def _family(name: str, repeats: int) -> dict[str, float]:
    env_id, kwargs, actions = FAMILIES[name]
    prefix = actions()
    trunk = await _started(env_id, kwargs, prefix)
    fork_times, fresh_times = [], []
    try:
        for _ in range(repeats):
            started = time.perf_counter()
            fresh = await _started(env_id, kwargs, prefix)
            fresh_times.append(time.perf_counter() - started)
            await fresh.close()
            started = time.perf_counter()
            (child,) = await afork(trunk, 1)
            fork_times.append(time.perf_counter() - started)
            await child.close()
        state = await asnapshot(trunk)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        children = await afork(trunk, 20)
        heap = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename")) / 20
        tracemalloc.stop()
        for child in children:
            await child.close()
    finally:
        await trunk.close()
    fork, fresh = statistics.median(fork_times), statistics.median(fresh_times)
    print(
        f"{name:12s} {env_id:20s} prefix {len(prefix):2d} steps: fork {fork * 1e3:8.3f} ms, "
        f"fresh env + replay {fresh * 1e3:8.3f} ms, ratio {fork / fresh:5.3f}x; "
        f"state {state.nbytes:,} bytes, Python heap per fork {heap / 1024:,.1f} KiB"
    )
    return {"fork": fork, "fresh": fresh}


async def _one_tree(oracle: Any, leaves_per_step: int) -> Any:
    env = rg.make_async("workflow/refund-v2", task=0)
    try:
        return await rg.arollout_tree(env, oracle, branch_at="every", num_branches=leaves_per_step, seed=0)
    finally:
        await env.close()


async def _tree(leaves_per_step: int) -> None:
    oracle = rg.make_policy("oracle")
    await _one_tree(oracle, 1)  # warm: imports, the task list
    started = time.perf_counter()
    group = await _one_tree(oracle, leaves_per_step)
    tree_seconds = time.perf_counter() - started
    leaves = len(group.trajectories) - 1
    del group
    started = time.perf_counter()
    for _ in range(leaves):
        fresh = rg.make_async("workflow/refund-v2", task=0)
        await rg.arollout(fresh, oracle, seed=0)
        await fresh.close()
    independent = time.perf_counter() - started
    gc.collect()
    tracemalloc.start()  # a second tree, for memory only (tracing slows Python several times)
    group = await _one_tree(oracle, leaves_per_step)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    points = len(group.metadata["tree"]["branch_at"])
    scores = sorted({trajectory.score.value for trajectory in group.trajectories})
    print(
        f"tree on workflow/refund-v2: {leaves:,} leaves ({leaves_per_step} per step x {points} steps) in "
        f"{tree_seconds:.3f} s; {leaves:,} independent oracle episodes (make + rollout each): {independent:.3f} s; "
        f"ratio {tree_seconds / independent:.3f}x; peak traced memory of the tree {peak / 2**20:.1f} MiB "
        f"({peak / leaves / 1024:.1f} KiB per leaf); scores {scores}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--leaves-per-step", type=int, default=200)
    args = parser.parse_args()
    for name in args.families.split(","):
        asyncio.run(_family(name, args.repeats))
    asyncio.run(_tree(args.leaves_per_step))


if __name__ == "__main__":
    main()
