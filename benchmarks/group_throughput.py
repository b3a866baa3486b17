"""arollout_group scheduling: 10,000 single-turn rollouts, a policy that sleeps 10 ms, concurrency 2,000.

The ideal wall time is (rollouts / concurrency) x latency = 50 ms. Prints rolloutgym's
wall time as a multiple of the ideal and, when rolloutlib 0.2.0 is installed, rolloutlib's
at 5,000 rollouts / concurrency 1,000 (the configuration measured for it) and at ours.

Target (issue 2): rolloutgym <= 1.3x the ideal. Target (issue 19): rolloutgym <= 2x the
bare-asyncio floor measured in the same run (the same sleeps with no env and no records), and
the memory each finished trajectory keeps (measured with tracemalloc over one group) halved.

The memory baseline is measured in the same run too: the script rebuilds, object for object,
what the engine kept per trajectory before issue 19 (commit 7524379^, measured there with this
method at 1,319 bytes): the env's two empty info dicts, a frozen dataclass ``Step`` with an
instance dict of its 12 fields and its own empty ``policy_info``, the slotted ``Trajectory``
with its steps tuple and metadata dict, and a ``Score`` with its own empty components and
metadata dicts.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


def build_env(base: type) -> type:
    class OneTurn(base):  # type: ignore[misc, valid-type]
        action_space = gym.spaces.Discrete(2)
        observation_space = gym.spaces.Discrete(2)

        async def reset(self, *, seed=None, options=None):
            return 0, {}

        async def step(self, action):
            return 1, 1.0, True, False, {}

    return OneTurn


def make_policy(latency: float):
    async def policy(observation):
        await asyncio.sleep(latency)
        return 1

    return policy


def timed(coroutine_factory, cpu: list[float] | None = None) -> float:
    """Wall seconds of one run; appends the process's CPU seconds to ``cpu`` when given."""
    started, cpu_started = time.perf_counter(), time.process_time()
    asyncio.run(coroutine_factory())
    if cpu is not None:
        cpu.append(time.process_time() - cpu_started)
    return time.perf_counter() - started


def bytes_per_trajectory(coroutine_factory, rollouts: int) -> float:
    """Bytes the finished group holds per trajectory (tracemalloc, after a full collection)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    group = asyncio.run(coroutine_factory())
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(group.trajectories) == rollouts
    return held / rollouts


@dataclass(frozen=True)
class BaselineStep:
    """The pre-issue-19 ``Step``: a frozen dataclass with an instance dict."""

    observation: Any
    action: Any
    reward: float
    next_observation: Any
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)
    policy_info: dict[str, Any] = field(default_factory=dict)
    policy_tokens: tuple[int, ...] | None = None
    policy_logprobs: tuple[float, ...] | None = None
    policy_stop_reason: str | None = None
    observation_tokens: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class BaselineTrajectory:
    """The pre-issue-19 ``Trajectory`` (already slotted then)."""

    initial_observation: Any
    steps: tuple[BaselineStep, ...]
    initial_info: dict[str, Any]
    terminated: bool
    truncated: bool
    metadata: dict[str, Any]
    stop_reason: str | None


class BaselineScore:
    """The pre-issue-19 ``Score``: four slots, its own components and metadata dicts."""

    __slots__ = ("components", "feedback", "metadata", "value")

    def __init__(self, value: float) -> None:
        self.value = float(value)
        self.components: dict[str, Any] = {}
        self.metadata: dict[str, Any] = dict({})
        self.feedback = None


def baseline_member(member: int) -> BaselineTrajectory:
    """One member as the pre-issue-19 engine kept it (same objects, built the same way)."""
    started = time.perf_counter()
    initial_info: dict[str, Any] = {}  # the env's reset info
    step = object.__new__(BaselineStep)
    fields = {
        "observation": 0,
        "action": 1,
        "reward": 1.0,
        "next_observation": 1,
        "terminated": True,
        "truncated": False,
        "info": {},  # the env's step info
        "policy_info": {},
        "policy_tokens": None,
        "policy_logprobs": None,
        "policy_stop_reason": None,
        "observation_tokens": None,
    }
    object.__setattr__(step, "__dict__", fields)  # the engine's old fast path
    metadata = {"member": member}
    trajectory = BaselineTrajectory(0, (step,), initial_info, True, False, metadata, "terminated")
    trajectory.metadata["elapsed_seconds"] = time.perf_counter() - started
    return trajectory


class BaselineGroup:
    __slots__ = ("scores", "trajectories")

    def __init__(self, trajectories: tuple[BaselineTrajectory, ...]) -> None:
        self.trajectories = trajectories
        self.scores = tuple(BaselineScore(float(sum(s.reward for s in t.steps))) for t in trajectories)


def baseline_group(rollouts: int):
    async def build() -> BaselineGroup:
        return BaselineGroup(tuple(baseline_member(member) for member in range(rollouts)))

    return build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=2_000)
    parser.add_argument("--latency-ms", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    latency = args.latency_ms / 1000

    from rolloutgym import AsyncEnv, arollout_group

    Ours = build_env(AsyncEnv)
    policy = make_policy(latency)

    def ours(rollouts: int, concurrency: int):
        return lambda: arollout_group(0, lambda item: Ours(), policy, num_rollouts=rollouts, concurrency=concurrency)

    ideal = args.rollouts / args.concurrency * latency

    async def bare_floor() -> None:
        # The same sleeps with no environment and no records: what asyncio itself costs here.
        members = iter(range(args.rollouts))

        async def worker() -> None:
            for _ in members:
                await policy(0)

        await asyncio.gather(*(worker() for _ in range(args.concurrency)))

    floor_cpu: list[float] = []
    ours_cpu: list[float] = []
    floors: list[float] = []
    times: list[float] = []
    for _ in range(args.repeats):
        # Interleaved, so that a slower spell of a shared machine weighs on both sides alike.
        floors.append(timed(bare_floor, floor_cpu))
        times.append(timed(ours(args.rollouts, args.concurrency), ours_cpu))
    floor = min(floors)
    best, median = min(times), statistics.median(times)
    paired = statistics.median(mine / base for mine, base in zip(times, floors, strict=True))
    print(
        f"ideal: {ideal * 1000:.1f} ms ({args.rollouts} rollouts, concurrency {args.concurrency}, "
        f"{args.latency_ms:g} ms policy)"
    )
    print(f"bare asyncio floor (sleeps only): best {floor * 1000:.1f} ms = {floor / ideal:.2f}x ideal")
    print(
        f"rolloutgym arollout_group: best {best * 1000:.1f} ms = {best / ideal:.2f}x ideal; "
        f"median {median * 1000:.1f} ms = {median / ideal:.2f}x ideal (target <= 1.3x)"
    )
    print(
        f"rolloutgym over the bare asyncio floor: {best / floor:.2f}x best/best, {paired:.2f}x median of "
        f"{args.repeats} interleaved pairs (target <= 2x)"
    )
    # CPU time is what the engine adds; unlike wall time it barely moves when other processes load the cores.
    engine_us = (min(ours_cpu) - min(floor_cpu)) / args.rollouts * 1e6
    print(
        f"  CPU time (best): floor {min(floor_cpu) * 1000:.0f} ms, rolloutgym {min(ours_cpu) * 1000:.0f} ms "
        f"= {engine_us:.1f} us of engine work per rollout"
    )
    kept = bytes_per_trajectory(ours(args.rollouts, args.concurrency), args.rollouts)
    baseline = bytes_per_trajectory(baseline_group(args.rollouts), args.rollouts)
    print(f"memory kept per finished trajectory: {kept:.0f} bytes")
    print(
        f"  pre-issue-19 records rebuilt in this run: {baseline:.0f} bytes (1,319 measured on commit 7524379^); "
        f"ratio {kept / baseline:.2f} (target <= 0.5)"
    )
    try:
        import rolloutlib
        from rolloutlib import AsyncEnv as TheirAsyncEnv
    except Exception as exc:
        print(f"rolloutlib 0.2.0 not measured ({type(exc).__name__}: {exc}); pip install rolloutlib==0.2.0")
        return
    Theirs = build_env(TheirAsyncEnv)
    for rollouts, concurrency in ((5_000, 1_000), (args.rollouts, args.concurrency)):
        their_ideal = rollouts / concurrency * latency
        their = [
            timed(
                lambda rollouts=rollouts, concurrency=concurrency: rolloutlib.arollout_group(
                    0, lambda item: Theirs(), policy, num_rollouts=rollouts, concurrency=concurrency
                )
            )
            for _ in range(max(1, args.repeats // 2))
        ]
        print(
            f"rolloutlib arollout_group at {rollouts}/{concurrency}: best {min(their) * 1000:.1f} ms = "
            f"{min(their) / their_ideal:.2f}x ideal"
        )


if __name__ == "__main__":
    main()
