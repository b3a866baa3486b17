"""The Ray executor against the local executor, on this machine: what Ray costs.

On a 2-core machine the point is overhead, not speed-up. Each scenario runs the same
rollouts on the local (asyncio, in-process) executor and on the Ray executor (one worker
per CPU), interleaved, best of ``--repeats``, and prints throughput ratios (ray / local;
above 1 means Ray is faster):

* **cpu-bound env**: a single-turn env whose ``step`` burns ``--work-ms`` of CPU; oracle
  policy in the workers. Local runs on one core (GIL), Ray on one core per worker.
* **latency-bound policy, driver side**: an API-like policy that waits ``--latency-ms``
  per call on the driver; envs in the workers, one ``reset``/``step`` call each way.
* **latency-bound policy, in workers**: the same policy built in each worker.
* **scheduling overhead**: a trivial env and the oracle, one member per group: the extra
  wall time per group on Ray (steady state, workers already started) and the one-off cost
  of starting the workers.
* **2,000 groups**: ``toy/arith-v0``-style tasks (2,000 of them) with the oracle, the
  run files of both executors compared (same contents up to order, timings aside).

Run: ``python benchmarks/ray_executor.py`` (needs ``pip install 'rolloutgym[ray]'``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

PLUGIN_MODULE = "rolloutgym_raybench_plugin"
PLUGIN_SOURCE = textwrap.dedent(
    '''
    """Envs and a policy for benchmarks/ray_executor.py."""

    import asyncio
    import functools
    import hashlib
    import time

    import gymnasium as gym
    from rolloutgym.builtin.toy import ArithTask
    from rolloutgym_protocol import EnvSpec, PolicySpec, hookimpl


    @functools.cache
    def tasks():
        return [ArithTask(f"t-{index:04d}", "train", f"What is {index} + 1?", index + 1) for index in range(2000)]


    class AnswerEnv(gym.Env):
        """Single turn: answer the task's number; ``step`` burns ``work_ms`` of CPU first."""

        action_space = gym.spaces.Text(32)
        observation_space = gym.spaces.Text(64)

        def __init__(self, task, work_ms: float = 0.0):
            self.task = task
            self.work_ms = float(work_ms)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return self.task.question, {}

        def step(self, action):
            deadline = time.process_time() + self.work_ms / 1000
            digest = b""
            while time.process_time() < deadline:
                digest = hashlib.sha256(digest).digest()
            reward = float(action == str(self.task.answer))
            return "", reward, True, False, {}

        def oracle_action(self):
            return str(self.task.answer)


    class SleepyPolicy:
        """An API-like policy: waits ``latency_ms`` per call, then answers a fixed string."""

        def __init__(self, latency_ms: float = 20.0):
            self.latency = float(latency_ms) / 1000

        async def __call__(self, observation):
            await asyncio.sleep(self.latency)
            return "42"


    def make_sleepy(model=None, **options):
        return SleepyPolicy(**options)


    @hookimpl
    def rolloutgym_envs():
        return [
            EnvSpec(
                id="raybench/answer-v0", entry_point=f"{__name__}:AnswerEnv", tasks=f"{__name__}:tasks", max_steps=1
            )
        ]


    @hookimpl
    def rolloutgym_policies():
        return [PolicySpec(name="sleepy", entry_point=f"{__name__}:make_sleepy")]
    '''
)


def normalized(path: Path) -> list[dict[str, Any]]:
    groups = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    for group in groups:
        for trajectory in group["trajectories"]:
            trajectory["metadata"].pop("elapsed_seconds")
    return sorted(groups, key=lambda group: group["task_index"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-ms", type=float, default=5.0, help="CPU per step of the cpu-bound env")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="wait per call of the latency-bound policy")
    parser.add_argument("--groups", type=int, default=400, help="groups per throughput scenario")
    parser.add_argument("--overhead-groups", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    try:
        import ray
    except ImportError:
        print("skipped: Ray is not installed (pip install 'rolloutgym[ray]')")
        return 0
    from rolloutgym.registry import Registry

    folder = Path(tempfile.mkdtemp(prefix="raybench-"))
    (folder / f"{PLUGIN_MODULE}.py").write_text(PLUGIN_SOURCE)
    sys.path.insert(0, str(folder))
    cpus = os.cpu_count() or 1
    started = time.perf_counter()
    ray.init(
        num_cpus=cpus,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {"PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}
        },
    )
    print(f"ray.init (local instance, {cpus} CPUs): {time.perf_counter() - started:.2f} s")
    registry = Registry()
    module = importlib.import_module(PLUGIN_MODULE)
    registry.register(module)
    bench = Bench(registry, args)
    bench.throughput(module.SleepyPolicy(args.latency_ms))
    bench.scheduling_overhead()
    same = bench.same_run_files()
    ray.shutdown()
    return 0 if same else 1


class Bench:
    """The scenarios, run on the local executor and the Ray executor with the same registry."""

    def __init__(self, registry: Any, args: argparse.Namespace) -> None:
        self.registry = registry
        self.args = args

    def timed(self, executor: Any, **options: Any) -> float:
        import rolloutgym as rg

        begin = time.perf_counter()
        result = rg.run(
            "raybench/answer-v0",
            registry=self.registry,
            executor=executor,
            concurrency=self.args.concurrency,
            **options,
        )
        elapsed = time.perf_counter() - begin
        assert len(result.groups) == options["limit"] and result.summary.num_errors == 0, result.summary
        return elapsed

    def compare(self, name: str, ray_options: dict[str, Any], **options: Any) -> None:
        from rolloutgym.executors import LocalExecutor
        from rolloutgym.executors.ray import RayExecutor

        local_times, ray_times = [], []
        executor = RayExecutor(registry=self.registry, keep_workers=True, **ray_options)
        self.timed(executor, **{**options, "limit": min(options["limit"], 20)})  # start the workers
        for _ in range(self.args.repeats):
            local_times.append(self.timed(LocalExecutor(), **options))
            ray_times.append(self.timed(executor, **options))
        executor.close()
        local, remote = min(local_times), min(ray_times)
        groups = options["limit"]
        print(
            f"{name:<36} local {groups / local:8.0f} groups/s   ray {groups / remote:8.0f} groups/s   "
            f"ray/local throughput {local / remote:5.2f}x"
        )

    def throughput(self, sleepy: Any) -> None:
        """The cpu-bound env and the latency-bound policy (driver side, in workers)."""
        args = self.args
        print(f"\n{args.groups} groups of 1 member, concurrency {args.concurrency}, best of {args.repeats}:")
        self.compare(
            f"cpu-bound env ({args.work_ms:g} ms/step, oracle)",
            {},
            policy="oracle",
            limit=args.groups,
            env_kwargs={"work_ms": args.work_ms},
        )
        self.compare(
            f"latency-bound policy ({args.latency_ms:g} ms, driver)",
            {"policy_placement": "driver"},
            policy="sleepy",
            policy_object=sleepy,
            limit=args.groups,
        )
        self.compare(
            f"latency-bound policy ({args.latency_ms:g} ms, workers)",
            {"policy_placement": "actor"},
            policy="sleepy",
            policy_options={"latency_ms": args.latency_ms},
            limit=args.groups,
        )

    def scheduling_overhead(self) -> None:
        """Trivial episodes, so the wall time is the executor's own cost."""
        from rolloutgym.executors import LocalExecutor
        from rolloutgym.executors.ray import RayExecutor

        groups, repeats = self.args.overhead_groups, self.args.repeats
        cold_executor = RayExecutor(registry=self.registry)
        begin = time.perf_counter()
        self.timed(cold_executor, policy="oracle", limit=1)
        cold = time.perf_counter() - begin
        executor = RayExecutor(registry=self.registry, keep_workers=True)
        self.timed(executor, policy="oracle", limit=1)
        warm_one = min(self.timed(executor, policy="oracle", limit=1) for _ in range(repeats))
        local_times, ray_times = [], []
        for _ in range(repeats):
            local_times.append(self.timed(LocalExecutor(), policy="oracle", limit=groups))
            ray_times.append(self.timed(executor, policy="oracle", limit=groups))
        executor.close()
        local, remote = min(local_times), min(ray_times)
        print(
            f"\nscheduling overhead, {groups} trivial groups (oracle, 1 member), concurrency {self.args.concurrency}:"
        )
        print(
            f"  local {local / groups * 1e6:8.0f} us/group   ray {remote / groups * 1e6:8.0f} us/group   "
            f"ray/local time {remote / local:5.2f}x"
        )
        print(
            f"  extra per group on ray: {(remote - local) / groups * 1e6:.0f} us;  a run of 1 group: "
            f"{warm_one * 1e3:.0f} ms with workers kept, {cold * 1e3:.0f} ms starting them"
        )

    def same_run_files(self) -> bool:
        """Done criterion of issue 10: 2,000 groups, same run file contents up to order."""
        import rolloutgym as rg
        from rolloutgym.executors import LocalExecutor
        from rolloutgym.executors.ray import RayExecutor

        with tempfile.TemporaryDirectory() as scratch:
            outputs = {}
            for name, chosen in (("local", LocalExecutor()), ("ray", RayExecutor(registry=self.registry))):
                outputs[name] = Path(scratch) / f"{name}.jsonl"
                begin = time.perf_counter()
                rg.run(
                    "raybench/answer-v0",
                    policy="oracle",
                    num_rollouts=1,
                    seed=0,
                    limit=2000,
                    registry=self.registry,
                    executor=chosen,
                    out=outputs[name],
                )
                started_workers = " (including starting the workers)" if name == "ray" else ""
                print(f"2,000 groups to a run file, {name}: {time.perf_counter() - begin:.2f} s{started_workers}")
            same = normalized(outputs["local"]) == normalized(outputs["ray"])
            print(f"run files identical up to order and timings: {same}")
        return same


if __name__ == "__main__":
    sys.exit(main())
