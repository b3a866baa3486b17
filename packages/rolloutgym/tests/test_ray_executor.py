"""The Ray executor on a local Ray instance (2 CPUs, one session-scoped fixture).

The envs used here come from a small plugin module the fixture writes to a temporary
folder that is on the path of the driver and of every Ray worker: ``raytest/arith-many-v0``
(2,000 arithmetic tasks, the toy ``ArithmeticEnv``) and ``raytest/crash-v0`` (kills its own
worker process on one task).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym.executors import GroupJob, LocalExecutor
from rolloutgym.executors._ray_worker import RolloutWorker, RunSpec
from rolloutgym.registry import Registry
from rolloutgym_protocol.errors import ConfigError

try:
    import ray
except ImportError:  # pragma: no cover - depends on the install
    if os.environ.get("CI") == "true":
        raise ImportError("the Ray executor tests need Ray in CI: pip install 'rolloutgym[ray]'") from None
    pytest.skip("Ray is not installed (pip install 'rolloutgym[ray]')", allow_module_level=True)

from rolloutgym.executors.ray import RayExecutor
from rolloutgym.sources import EnvSource, PolicySource

# The session's Ray instance has 2 CPUs and the shared executor keeps its workers: the
# executors of the tests ask for half a CPU per worker so that they never wait for each other.
HALF_CPU = {"num_cpus": 0.5}
PLUGIN_MODULE = "rolloutgym_raytest_plugin"
PLUGIN_SOURCE = textwrap.dedent(
    '''
    """A test plugin for the Ray executor tests: many tasks, and an env that kills its worker."""

    import functools
    import os

    from rolloutgym.builtin.toy import ArithmeticEnv, ArithTask
    from rolloutgym_protocol import EnvSpec, hookimpl


    @functools.cache  # the registry loads the task list at every make()
    def many_tasks():
        return [
            ArithTask(f"arith-{index:04d}", "train", f"What is {index} + {index % 7}?", index + index % 7)
            for index in range(2000)
        ]


    def crash_tasks():
        return many_tasks()[:6]


    def driver_only_tasks():
        """Tasks that load in the test process only: a worker that cannot set up the env."""
        if os.getpid() != DRIVER_PID:
            raise RuntimeError("this node has no task data")
        return many_tasks()[:2]


    class CrashingArithmeticEnv(ArithmeticEnv):
        """Kills its own process when asked task arith-0001: a worker dying mid-episode."""

        def step(self, action):
            if self.task.id == "arith-0001":
                os._exit(1)
            return super().step(action)


    @hookimpl
    def rolloutgym_envs():
        return [
            EnvSpec(
                id="raytest/arith-many-v0",
                entry_point="rolloutgym.builtin.toy:ArithmeticEnv",
                tasks=f"{__name__}:many_tasks",
                max_steps=1,
                replayable=True,
            ),
            EnvSpec(
                id="raytest/crash-v0",
                entry_point=f"{__name__}:CrashingArithmeticEnv",
                tasks=f"{__name__}:crash_tasks",
                max_steps=1,
            ),
            EnvSpec(
                id="raytest/driver-only-v0",
                entry_point="rolloutgym.builtin.toy:ArithmeticEnv",
                tasks=f"{__name__}:driver_only_tasks",
                max_steps=1,
            ),
        ]
    '''
)


@pytest.fixture(scope="session")
def ray_registry(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A local Ray instance whose workers can import the test plugin; yields a registry with it."""
    folder = tmp_path_factory.mktemp("ray_plugin")
    (folder / f"{PLUGIN_MODULE}.py").write_text(PLUGIN_SOURCE + f"\n\nDRIVER_PID = {os.getpid()}\n")
    sys.path.insert(0, str(folder))
    python_path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": python_path}},
    )
    registry = Registry()
    registry.register(importlib.import_module(PLUGIN_MODULE))
    try:
        yield registry
    finally:
        ray.shutdown()
        sys.path.remove(str(folder))
        sys.modules.pop(PLUGIN_MODULE, None)


@pytest.fixture(scope="session")
def shared_executor(ray_registry: Registry) -> Any:
    """One executor whose two workers serve several tests (starting workers takes seconds)."""
    executor = RayExecutor(registry=ray_registry, keep_workers=True, num_workers=2, actor_options=HALF_CPU)
    yield executor
    executor.close()


def normalized(path: Path, *, drop_retried: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run file without what differs between executors: ids, times, executor name, order."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header, groups = lines[0], lines[1:]
    for key in ("run_id", "created_at"):
        header.pop(key)
    header["options"].pop("executor")
    for group in groups:
        for trajectory in group["trajectories"]:
            trajectory["metadata"].pop("elapsed_seconds")
        if drop_retried:
            group["metadata"].pop("retried", None)
    return header, sorted(groups, key=lambda group: group["task_index"])


def run_both(
    registry: Registry, tmp_path: Path, executor: RayExecutor, on_group: Any = None, **options: Any
) -> tuple[Any, Any]:
    local = rg.run(out=tmp_path / "local.jsonl", registry=registry, executor=LocalExecutor(), **options)
    remote = rg.run(out=tmp_path / "ray.jsonl", registry=registry, executor=executor, on_group=on_group, **options)
    return local, remote


@pytest.mark.ray
def test_ray_run_of_2000_groups_has_the_same_run_file_as_local(
    ray_registry: Registry, shared_executor: RayExecutor, tmp_path: Path
) -> None:
    reported: list[int] = []
    local, remote = run_both(
        ray_registry,
        tmp_path,
        shared_executor,
        config="raytest/arith-many-v0",
        policy="oracle",
        seed=0,
        concurrency=8,
        on_group=lambda index, group: reported.append(index),
    )
    assert len(remote.groups) == 2000 and remote.summary.pass_rate == 1.0
    assert sorted(reported) == list(range(2000))  # streamed: each group reported once
    assert normalized(tmp_path / "ray.jsonl") == normalized(tmp_path / "local.jsonl")


async def adding_policy(observation: Any) -> str:
    """A driver-side policy that solves 'What is A + B?' from the prompt (as a model would)."""
    await asyncio.sleep(0)
    numbers = [int(word) for word in observation[-1]["content"].replace("?", " ").split() if word.isdigit()]
    return str(sum(numbers[:2]))


@pytest.mark.ray
@pytest.mark.parametrize("placement", ["actor", "driver"])
def test_ray_killing_a_worker_mid_run_loses_and_duplicates_nothing(
    ray_registry: Registry, tmp_path: Path, placement: str
) -> None:
    executor = RayExecutor(
        registry=ray_registry,
        num_workers=2,
        actor_options=HALF_CPU,
        policy_placement=placement,  # type: ignore[arg-type]
    )
    killed: list[Any] = []
    seen: list[int] = []

    def kill_after_some_groups(index: int, group: Any) -> None:
        seen.append(index)
        if len(seen) == 20:  # work is in flight on both workers now
            killed.append(executor.workers[0])
            ray.kill(executor.workers[0], no_restart=True)

    options: dict[str, Any] = {
        "config": "raytest/arith-many-v0",
        "policy": "oracle",
        "num_rollouts": 2,
        "limit": 200 if placement == "actor" else 100,
        "seed": 3,
        "concurrency": 8,
    }
    if placement == "driver":
        options["policy_object"] = adding_policy
    rg.run(out=tmp_path / "local.jsonl", registry=ray_registry, executor=LocalExecutor(), **options)
    result = rg.run(
        out=tmp_path / "ray.jsonl", registry=ray_registry, executor=executor, on_group=kill_after_some_groups, **options
    )

    assert killed, "the test never killed a worker"
    lines = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()[1:]]
    task_indices = [line["task_index"] for line in lines]
    assert sorted(task_indices) == list(range(options["limit"]))  # none lost, none twice
    assert all(len(line["trajectories"]) == 2 and not line["errors"] for line in lines)
    retried = [line for line in lines if line["metadata"].get("retried")]
    assert retried, "no group was marked as retried although a worker died mid-run"
    assert result.summary.pass_rate == 1.0
    assert normalized(tmp_path / "ray.jsonl", drop_retried=True) == normalized(tmp_path / "local.jsonl")


@pytest.mark.ray
def test_ray_member_whose_retry_dies_too_is_recorded_not_lost(ray_registry: Registry, tmp_path: Path) -> None:
    # One group at a time, so that the crashing task takes no other task's members down with it.
    executor = RayExecutor(registry=ray_registry, num_workers=1, max_in_flight=2, actor_options=HALF_CPU)
    result = rg.run(
        "raytest/crash-v0",
        policy="oracle",
        num_rollouts=2,
        concurrency=2,
        registry=ray_registry,
        executor=executor,
        out=tmp_path / "crash.jsonl",
    )
    by_task = dict(zip(result.task_indices, result.groups, strict=True))
    assert sorted(by_task) == list(range(6))
    crashed = by_task[1]
    assert crashed.metadata["retried"] is True
    assert not crashed.trajectories
    assert [error.error_type for error in crashed.errors] == ["WorkerLost", "WorkerLost"]
    assert sorted(error.member for error in crashed.errors) == [0, 1]
    assert "retry" in crashed.errors[0].error_message
    others = [group for index, group in by_task.items() if index != 1]
    assert all(len(group.trajectories) == 2 and group.rewards == (1.0, 1.0) for group in others)
    assert all("retried" not in group.metadata for group in others)
    assert executor.workers == []  # the run's workers are gone after it


@pytest.mark.ray
def test_ray_driver_side_policy_drives_envs_in_workers(
    ray_registry: Registry, shared_executor: RayExecutor, tmp_path: Path
) -> None:
    # A recorded oracle run of the multi-turn tool-calling env, replayed by a driver-side policy.
    rg.run(
        "toy/guess-v0", policy="oracle", num_rollouts=2, seed=5, out=tmp_path / "oracle.jsonl", registry=ray_registry
    )
    assert shared_executor.placement(PolicySource(f"replay:{tmp_path / 'oracle.jsonl'}")) == "driver"
    local, remote = run_both(
        ray_registry,
        tmp_path,
        shared_executor,
        config="toy/guess-v0",
        policy=f"replay:{tmp_path / 'oracle.jsonl'}",
        num_rollouts=2,
        seed=5,
    )
    assert remote.summary.pass_rate == 1.0 and remote.summary.num_errors == 0
    assert normalized(tmp_path / "ray.jsonl") == normalized(tmp_path / "local.jsonl")


@pytest.mark.ray
def test_ray_driver_side_policy_object_and_env_errors_are_records(ray_registry: Registry, tmp_path: Path) -> None:
    calls: list[Any] = []

    async def latency_bound_policy(observation: Any) -> str:
        calls.append(observation)
        await asyncio.sleep(0.001)
        return "not a number"

    executor = RayExecutor(
        registry=ray_registry, policy_placement="driver", num_workers=1, keep_workers=True, actor_options=HALF_CPU
    )
    result = rg.run(
        "toy/arith-v0",
        policy="null",
        limit=10,
        registry=ray_registry,
        executor=executor,
        policy_object=latency_bound_policy,
    )
    assert len(calls) == 10 and result.summary.pass_rate == 0.0
    feedback = [group.scores[0].feedback for group in result.groups]
    assert all(text.startswith("no integer found") for text in feedback)

    # The oracle needs the env object itself, so on the driver it fails: recorded, named, not raised.
    result = rg.run("toy/arith-v0", policy="oracle", limit=3, registry=ray_registry, executor=executor)
    executor.close()
    errors = [error for group in result.groups for error in group.errors]
    assert len(errors) == 3 and all(
        error.error_type == "PolicyError" and "oracle_action" in error.error_message for error in errors
    )


@pytest.mark.ray
def test_ray_workers_kept_between_runs_until_closed(ray_registry: Registry) -> None:
    executor = RayExecutor(registry=ray_registry, keep_workers=True, num_workers=1, actor_options=HALF_CPU)
    first = rg.run("toy/arith-v0", policy="oracle", limit=5, registry=ray_registry, executor=executor)
    workers = list(executor.workers)
    second = rg.run("toy/guess-v0", policy="oracle", limit=5, registry=ray_registry, executor=executor)
    assert first.summary.pass_rate == second.summary.pass_rate == 1.0
    assert executor.workers == workers and len(workers) == 1
    executor.close()
    assert executor.workers == [] and ray.is_initialized()  # Ray itself belongs to the fixture


@pytest.mark.ray
def test_ray_cli_connects_to_a_running_cluster(ray_registry: Registry, tmp_path: Path) -> None:
    address = ray.get_runtime_context().gcs_address
    out = tmp_path / "cli.jsonl"
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from rolloutgym.cli import console_main; sys.argv[0] = 'rolloutgym'; console_main()",
            "run",
            "toy/arith-v0",
            "--executor",
            "ray",
            "--ray-address",
            address,
            "--limit",
            "4",
            "-n",
            "2",
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    lines = out.read_text().splitlines()
    assert json.loads(lines[0])["options"]["executor"] == "ray"
    assert len(lines) == 5


@pytest.mark.ray
def test_ray_worker_that_cannot_set_up_the_env_fails_the_run_early(
    ray_registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    executor = RayExecutor(registry=ray_registry, num_workers=1, actor_options=HALF_CPU)
    with pytest.raises(ConfigError, match="a Ray worker could not set up env 'raytest/driver-only-v0'.*no task data"):
        rg.run("raytest/driver-only-v0", policy="oracle", limit=2, registry=ray_registry, executor=executor)
    assert executor.workers == []


def test_ray_workers_mirror_the_drivers_registry_not_the_global_one() -> None:
    """run(..., registry=custom) must not mix in installed plugins on the workers either."""
    from rolloutgym.executors._ray_worker import RegistryMirror

    custom = Registry(load_entry_points=False)
    custom.register(importlib.import_module("rolloutgym.builtin.plugin"), name="toys-only")
    executor = RayExecutor(num_workers=1)
    mirror = executor._mirror(custom)
    assert (mirror.load_entry_points, mirror.core) == (False, False)
    rebuilt = mirror.build()
    assert [info.name for info in rebuilt.plugins] == ["toys-only"]
    assert "toy/arith-v0" in rebuilt.env_specs()
    assert RegistryMirror().build().env_specs().keys() >= {"toy/arith-v0", "toy/guess-v0"}


def test_ray_unknown_policy_placement_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="policy_placement must be"):
        RayExecutor(policy_placement="gpu")  # type: ignore[arg-type]


# -- the worker class itself, without Ray ------------------------------------------------


def _worker_run(reuse: bool, members: int = 8) -> tuple[list[Any], int]:
    async def scenario() -> tuple[list[Any], int]:
        worker = RolloutWorker(slots=2)
        spec = RunSpec("run", EnvSource("toy/guess-v0"), PolicySource("oracle"), reuse_envs=reuse)
        job = GroupJob(3, "guess-03", members, list(range(members)))
        outcomes = await worker.run_members(spec, [(job, member) for member in range(members)])
        created = await worker.finish("run")
        return outcomes, created

    return asyncio.run(scenario())


def test_ray_worker_reuses_env_instances_across_episodes() -> None:
    reused, created_reusing = _worker_run(reuse=True)
    fresh, created_fresh = _worker_run(reuse=False)
    assert created_reusing == 2  # one per slot, reset between the 8 episodes
    assert created_fresh == 8
    strip = lambda outcome: outcome.to_dict() | {"metadata": {**outcome.metadata, "elapsed_seconds": 0}}  # noqa: E731
    assert [strip(outcome) for outcome in reused] == [strip(outcome) for outcome in fresh]
    assert [outcome.metadata["member"] for outcome in reused] == list(range(8))
