"""Sandbox providers side by side: bubblewrap (the baseline) and docker over podman, in one run.

Measured, each against bubblewrap in the same run (on whatever else the machine is running;
the load average is printed before and after):

1. **create -> exec -> destroy** of one trivial command (``python3 -c pass``), ``--cycles``
   times, p50 and p99: bubblewrap (one ``run``), docker cold (create + start + exec + remove),
   docker from a warm pool (``pool_size`` ready containers, refilled behind), each docker line
   twice: commands through the exec agent in the container (the default) and through the
   engine's exec (``agent=False``, the baseline). The warm lines also give the **episode start**
   (create from the pool + the first command, what an episode waits for; destroy happens
   after its reward) and pause ``--pace`` seconds between cycles, as episodes would, so the
   pool refills (``--pace 0``: back to back, the pool drains and most cycles start cold).
2. **N concurrent sandboxes** (``--concurrent``, 64): all created (``--workers`` at a time),
   each runs a command, the engine's memory figure per container, failures; then all removed.
3. **A Harbor task end to end** (build cached, oracle): the same task (a variant of
   ``examples/harbor-docker/greeter`` that needs nothing the host lacks) on bubblewrap and on docker.

    python benchmarks/sandboxes.py [--cycles 100] [--concurrent 64] [--pool 4]

Needs podman and the base image (``scripts/build_base_images.sh``) and bubblewrap; it starts its
own ``podman system service`` on a temp socket.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rolloutgym.sandboxes import ResourceLimits, SandboxInfraError
from rolloutgym.sandboxes.docker import DockerProvider
from rolloutgym_code._harbor_task import read_task
from rolloutgym_code.harbor import HarborTaskEnv
from rolloutgym_code.sandbox import SandboxLimits, get_sandbox
from rolloutgym_testing.podman import BASE_IMAGE, PodmanService

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["python3", "-c", "pass"]
LIMITS = ResourceLimits(cpus=1, memory_bytes=256 << 20, pids=64, disk_bytes=32 << 20)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p99 * 1000


def line(name: str, samples: list[float], baseline: float | None = None) -> float:
    p50, p99 = percentiles(samples)
    ratio = f"  ({p50 / baseline:.2f}x bubblewrap p50)" if baseline else ""
    print(f"{name:<28} p50 {p50:8.1f} ms   p99 {p99:8.1f} ms   n={len(samples)}{ratio}")
    return p50


def cycle_bwrap(cycles: int) -> list[float]:
    sandbox = get_sandbox("bwrap")
    samples = []
    for _ in range(cycles):
        started = time.perf_counter()
        result = sandbox.run(COMMAND, files={}, limits=SandboxLimits(wall_seconds=30))
        assert result.exit_code == 0, result.output
        samples.append(time.perf_counter() - started)
    return samples


def cycle_docker(
    provider: DockerProvider, cycles: int, pace: float = 0.0
) -> tuple[list[float], list[float], dict[str, list[float]]]:
    """``(create->exec->destroy seconds, create->first exec seconds, stage seconds)`` per cycle."""
    samples: list[float] = []
    starts: list[float] = []
    stages: dict[str, list[float]] = {}
    for _ in range(cycles):
        time.sleep(pace)
        started = time.perf_counter()
        box = provider.create(image=BASE_IMAGE, workdir="/app", limits=LIMITS)
        result = box.exec(COMMAND, timeout=30)
        starts.append(time.perf_counter() - started)
        box.destroy()
        samples.append(time.perf_counter() - started)
        assert result.ok, result.output
        for stage, seconds in box.stages.items():
            stages.setdefault(stage, []).append(seconds)
    return samples, starts, stages


def cycles_docker(host: str, agent: bool, arguments: argparse.Namespace, bwrap: float) -> None:
    how = "exec agent" if agent else "engine exec"
    with DockerProvider(host, agent=agent) as cold:
        samples, _, stages = cycle_docker(cold, arguments.cycles)
        line(f"docker cold, {how}", samples, bwrap)
        for stage, seconds in stages.items():
            print(f"    stage {stage:<12} p50 {statistics.median(seconds) * 1000:8.1f} ms")
    with DockerProvider(host, pool_size=arguments.pool, reap=False, agent=agent) as warm:
        warm.warm(image=BASE_IMAGE, workdir="/app", limits=LIMITS)
        samples, starts, stages = cycle_docker(warm, arguments.cycles, arguments.pace)
        line(f"docker warm ({arguments.pool}), {how}", samples, bwrap)
        line("    episode start (warm)", starts, bwrap)
        for stage in ("first_exec", "destroy"):
            print(f"    stage {stage:<12} p50 {statistics.median(stages[stage]) * 1000:8.1f} ms")
        print(f"    cycles served from the pool: {len(stages.get('pool_age', []))} of {arguments.cycles}")


def concurrent(provider: DockerProvider, count: int, workers: int) -> None:
    boxes: list[Any] = []
    failures = 0

    def start(_: int) -> Any:
        return provider.create(image=BASE_IMAGE, workdir="/app", limits=LIMITS)

    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        for future in [pool.submit(start, index) for index in range(count)]:
            try:
                boxes.append(future.result())
            except SandboxInfraError as exc:
                failures += 1
                print(f"  create failed: {exc}")
        created = time.perf_counter() - started
        results = list(pool.map(lambda box: box.exec(["python3", "-c", "print(1)"], timeout=120), boxes))
    failures += sum(not result.ok for result in results)
    memory = [usage / (1 << 20) for usage in map(_memory_bytes, boxes) if usage]
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda box: box.destroy(), boxes))
    mean = f"{statistics.mean(memory):.1f} MiB" if memory else "n/a"
    print(
        f"{count} concurrent sandboxes: all up in {created:.1f} s ({workers} creating at a time), "
        f"failures {failures}, memory per sandbox (its memory cgroup, after one python run) {mean}"
    )


def _memory_bytes(box: Any) -> int | None:
    """The container's memory cgroup usage (podman's cgroupfs layout, v1 then v2), else None."""
    for path in (
        f"/sys/fs/cgroup/memory/libpod_parent/libpod-{box.id}/memory.usage_in_bytes",
        f"/sys/fs/cgroup/libpod_parent/libpod-{box.id}/memory.current",
    ):
        if os.path.exists(path):
            return int(Path(path).read_text())
    return None


def harbor_task(folder: Path) -> Path:
    """A copy of the example task that the host's Python can solve too (no installed module)."""
    task = folder / "tasks" / "echo"
    shutil.copytree(ROOT / "examples" / "harbor-docker" / "greeter", task)
    (task / "environment" / "Dockerfile").write_text(
        "FROM python:3.11-slim\nWORKDIR /app\nCOPY notes.txt /app/notes.txt\n"
    )
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 'Hello, Ada!' > /app/answer.txt\n")
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\n[ \"$(cat /app/answer.txt)\" = 'Hello, Ada!' ] && echo 1 > /logs/verifier/reward.txt "
        "|| echo 0 > /logs/verifier/reward.txt\n"
    )
    return task


def episode(task: Path, **options: Any) -> float:
    env = HarborTaskEnv(read_task(task), **options)
    started = time.perf_counter()
    try:
        env.reset()
        reward = 0.0
        for _ in range(3):
            _, reward, terminated, _, _ = env.step(env.oracle_action())
            if terminated:
                break
    finally:
        env.close()
    assert reward == 1.0
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument("--concurrent", type=int, default=64)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--pool", type=int, default=4)
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between warm cycles (an episode's length)")
    parser.add_argument("--episodes", type=int, default=5)
    arguments = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder, PodmanService.start(Path(folder) / "podman") as service:
        bwrap = line("bubblewrap run", cycle_bwrap(arguments.cycles))
        for agent in (False, True):
            cycles_docker(service.host, agent, arguments, bwrap)
        with DockerProvider(service.host, reap=False) as many:
            concurrent(many, arguments.concurrent, arguments.workers)
        task = harbor_task(Path(folder))
        image_map = f"python:3.11-slim={BASE_IMAGE}"
        docker_options = {"sandbox": "docker", "image_map": image_map, "sandbox_options": {"host": service.host}}
        episode(task, **docker_options)  # the build, once (cached after)
        on_bwrap = [episode(task) for _ in range(arguments.episodes)]
        on_docker = [episode(task, **docker_options) for _ in range(arguments.episodes)]
        base = line("Harbor task, bubblewrap", on_bwrap)
        line("Harbor task, docker", on_docker, base)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
