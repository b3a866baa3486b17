"""Making one env per episode through the door against the resolved env's own factory, in one run.

A trainer (TRL's GRPO rollout function, tinker-cookbook) makes one env per episode with
``Registry.make_async(env_id, task=task_id)``; a run makes them with
``ResolvedEnv.make_async(index)`` (resolved once). Both now go through the registry's one
builder (``Registry.env_builder``) and its cached ``TaskIndex``, so per episode the door costs
a few dictionary lookups more than the factory call. Target (issue 30): the door within 1.5x of
``ResolvedEnv.make_async(index)`` on ``bench/gsm8k-v0`` (was ~30x: every call rebuilt every
task id). Also times ``rg.make(id, task=item)`` (lookup by item) and the factory alone (the floor).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import rolloutgym as rg
from rolloutgym.sources import resolve_env


def per_call(make: Callable[[int], Any], count: int, repeats: int) -> float:
    """Median seconds per call of ``make(i)`` over ``repeats`` passes of ``count`` calls."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        for i in range(count):
            make(i)
        samples.append((time.perf_counter() - started) / count)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="bench/gsm8k-v0")
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    registry = rg.get_registry()
    resolved = resolve_env(args.env, registry)
    ids, items = resolved.task_ids, resolved.tasks
    count = max(args.episodes, len(ids))
    spec = registry.resolve_env(args.env).spec
    factory = registry.env_factory(spec.id)
    registry.make_async(spec.id, task=ids[0])  # first call: loads the task index and imports the factory

    floor = per_call(lambda i: factory(**spec.kwargs, task=items[i % len(items)]), count, args.repeats)
    resolved_time = per_call(lambda i: resolved.make_async(i % len(items)), count, args.repeats)
    door = per_call(lambda i: registry.make_async(spec.id, task=ids[i % len(ids)]), count, args.repeats)
    by_item = per_call(lambda i: rg.make(spec.id, task=items[i % len(items)]), count, args.repeats)
    print(f"env {spec.id}: {len(ids)} tasks, {count} episodes x {args.repeats} passes (median)")
    print(f"factory alone (floor)                      : {floor * 1e6:8.1f} us/episode")
    print(f"ResolvedEnv.make_async(index)              : {resolved_time * 1e6:8.1f} us/episode")
    print(f"Registry.make_async(id, task=task_id)      : {door * 1e6:8.1f} us/episode")
    print(f"rg.make(id, task=item)                     : {by_item * 1e6:8.1f} us/episode")
    ratio = door / resolved_time
    print(f"door / resolved: {ratio:.2f}x (target <= 1.5x; was ~30x)")


if __name__ == "__main__":
    main()
