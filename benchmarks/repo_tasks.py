"""``rolloutgym tasks make-repo``: generation yield and grading cost (issue 43).

For each package given (default: the sdists of ``parse`` and ``cachetools`` from PyPI; a name,
``NAME==VERSION``, an sdist file or a local folder):

* **generation**: tasks kept per minute of CPU (this process plus the pytest processes in the
  sandboxes, which measure themselves) and per minute of wall time, and the share of candidates kept;
* **grading**: for each kept task, with the reference fix applied, the verifier as an episode
  runs it (``HarborTaskEnv``: ``tests/test.sh`` -> ``grade.py`` in a fresh bubblewrap sandbox,
  the trusted tests laid over a copy of the workspace) against the baseline, the same test
  selection run directly (``python3 -m pytest <hidden files>`` in a bubblewrap sandbox of the
  same provider holding the fixed repository). Samples are interleaved; the ratio of medians
  per task is printed (target <= 1.3x).

Run: ``python benchmarks/repo_tasks.py [PACKAGE ...] [--max-tasks 6] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import tempfile
import time
from pathlib import Path

from rolloutgym.sandboxes import get_provider
from rolloutgym_code._harbor_task import read_task
from rolloutgym_code.harbor import HarborTaskEnv
from rolloutgym_code.repotasks import make_repo_tasks


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def generate(spec: str, out: Path, max_tasks: int) -> dict:
    cpu, wall = _cpu(), time.perf_counter()
    generation = make_repo_tasks(spec, out, seed=0, max_tasks=max_tasks)
    # This process plus pytest's processes in the sandboxes (bubblewrap's children are not reaped
    # by this process, so RUSAGE_CHILDREN misses them; the reporting plugin measures them inside).
    cpu, wall = _cpu() - cpu + generation.sandbox_cpu_seconds, time.perf_counter() - wall
    kept = len(generation.bugs)
    return {
        "package": f"{generation.project.name} {generation.project.version}",
        "kept": kept,
        "tried": generation.tried,
        "share_kept": kept / generation.tried if generation.tried else 0.0,
        "per_cpu_minute": kept / (cpu / 60) if cpu else 0.0,
        "per_wall_minute": kept / (wall / 60),
        "baseline_run_s": generation.baseline_seconds,
    }


def _repository(task_dir: Path) -> dict[str, bytes]:
    """The task's workspace with the original tests laid over it (the fix is applied in the sandbox)."""
    files = {}
    for folder in (task_dir / "environment" / "repo", task_dir / "tests" / "trusted"):
        files.update({p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()})
    files[".rg-solve.sh"] = (task_dir / "solution" / "solve.sh").read_bytes()
    return files


def grade_with_env(task_dir: Path) -> tuple[float, float]:
    env = HarborTaskEnv(read_task(task_dir))
    try:
        env.reset()
        env.step(env.oracle_action())  # the reference fix, outside the timing
        started = time.perf_counter()
        _, reward, *_ = env.step({"role": "assistant", "content": "done"})
        return time.perf_counter() - started, reward
    finally:
        env.close()


def direct_run(task_dir: Path, provider) -> float:
    grading = json.loads((task_dir / "tests" / "grading.json").read_text())
    files = _repository(task_dir)
    root = f"/app/{grading['source_root']}" if grading["source_root"] else "/app"
    box = provider.create(workdir="/app", env={"PYTHONPATH": f"{root}:/app", "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        box.write_files(files, "/app")
        assert box.exec("bash .rg-solve.sh", timeout=60).exit_code == 0
        command = "python3 -m pytest -q -p no:cacheprovider -o addopts= " + " ".join(
            shlex.quote(path) for path in grading["hidden_files"]
        )
        started = time.perf_counter()
        result = box.exec(command, timeout=grading["timeout"])
        elapsed = time.perf_counter() - started
        assert result.exit_code == 0, result.output[-500:]
        return elapsed
    finally:
        box.destroy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", default=["parse==1.22.4", "cachetools==8.0.3"])
    parser.add_argument("--max-tasks", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--grade-tasks", type=int, default=3, help="tasks per package timed for grading")
    arguments = parser.parse_args()
    provider = get_provider("bwrap")
    ratios = []
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for spec in arguments.packages:
        with tempfile.TemporaryDirectory() as temporary:
            out = Path(temporary) / "tasks"
            figures = generate(spec, out, arguments.max_tasks)
            print(
                f"{figures['package']}: {figures['kept']} kept of {figures['tried']} candidates "
                f"({figures['share_kept']:.0%}); {figures['per_cpu_minute']:.1f} tasks per CPU-minute, "
                f"{figures['per_wall_minute']:.1f} per wall-minute "
                f"(one test-suite run {figures['baseline_run_s']:.1f} s)"
            )
            for task_dir in sorted(p for p in out.iterdir() if p.is_dir())[: arguments.grade_tasks]:
                env_times, direct_times = [], []
                for _ in range(arguments.repeats):
                    seconds, reward = grade_with_env(task_dir)
                    assert reward == 1.0, f"{task_dir.name}: the oracle scored {reward}"
                    env_times.append(seconds)
                    direct_times.append(direct_run(task_dir, provider))
                ratio = statistics.median(env_times) / statistics.median(direct_times)
                ratios.append(ratio)
                print(
                    f"  grade {task_dir.name}: verifier {statistics.median(env_times):.2f} s, "
                    f"tests run directly {statistics.median(direct_times):.2f} s: {ratio:.2f}x"
                )
    provider.close()
    if ratios:
        print(f"grading / direct test run: median {statistics.median(ratios):.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main()
