"""Code environments: a sandboxed hidden-test run against a plain subprocess pytest run.

For a few ``code/pybugs-v0`` tasks (buggy and fixed repository), time

* baseline: write the files to a fresh temp directory and run
  ``python3 -I -B -m pytest ...`` there as a plain subprocess (same interpreter, same
  flags, same JUnit report), then read the report and delete the directory;
* rolloutgym: ``run_pytest`` through each local sandbox provider (``bwrap``, and
  ``unshare`` when running as root): namespaces, rlimits, the uid drop, the bounded output
  reader, and the hardened verdict (a trusted supervisor process that starts the pytest
  worker and accepts only its authenticated result batch; the worker's audit hook and
  integrity checks). ``--grading`` times grading runs instead (hidden tests read-only
  outside the workspace, exact-type assertions, expected-test check).

Samples are interleaved and the median per task is compared (target: sandboxed <= 1.3x).

Run: ``python benchmarks/code_sandbox.py`` (``--repeats`` for more samples).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from rolloutgym_code.sandbox import SandboxUnavailable, get_sandbox
from rolloutgym_code.tasks import pybugs_tasks
from rolloutgym_code.testrun import run_pytest
from rolloutgym_code.workspace import Workspace

PYTHON = "/usr/bin/python3"
CONFIG_NAME = "pytest.ini"
CONFIG = "[pytest]\naddopts =\njunit_family = xunit1\npythonpath = . src\n"


def plain_run(files: dict[str, bytes], paths: list[str]) -> float:
    """The baseline: the same pytest command in a temp directory, no sandbox."""
    started = time.perf_counter()
    directory = tempfile.mkdtemp(prefix="bench-plain-")
    try:
        for name, data in {**files, CONFIG_NAME: CONFIG.encode()}.items():
            target = os.path.join(directory, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(data)
        command = [
            PYTHON,
            "-I",
            "-B",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            CONFIG_NAME,
            "--rootdir=.",
            "--junitxml=report.xml",
            "--tb=short",
            *paths,
        ]
        subprocess.run(
            command,
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
            check=False,
        )
        with open(os.path.join(directory, "report.xml"), "rb") as handle:
            handle.read()
    finally:
        shutil.rmtree(directory)
    return time.perf_counter() - started


def sandboxed_run(sandbox, files: dict[str, bytes], paths: list[str], trusted=None) -> float:
    started = time.perf_counter()
    if trusted is None:
        result = run_pytest(sandbox, files, paths)
    else:
        workspace = {path: data for path, data in files.items() if path not in trusted}
        result = run_pytest(sandbox, workspace, paths, trusted_tests=trusted)
    assert result.sandbox is not None and result.cases, result.problem
    return time.perf_counter() - started


def fixed_files(task) -> dict[str, str]:
    workspace = Workspace(task.files)
    try:
        workspace.apply_patch(task.reference_patch)
        return workspace.text_files()
    finally:
        workspace.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--grading", action="store_true", help="time grading runs (hidden tests as trusted files)")
    options = parser.parse_args()

    providers = []
    for name in ("bwrap", "unshare"):
        try:
            providers.append(get_sandbox(name))
        except SandboxUnavailable as exc:
            print(f"{name}: unavailable ({exc})")
    if not providers:
        return 1

    cases = []
    for task in pybugs_tasks()[: options.tasks]:
        paths = sorted(task.hidden_tests)
        for label, repository in (("buggy", dict(task.files)), ("fixed", fixed_files(task))):
            files = {path: content.encode() for path, content in {**repository, **task.hidden_tests}.items()}
            trusted = {path: files[path] for path in paths} if options.grading else None
            cases.append((f"{task.id} ({label})", files, paths, trusted))

    timings: dict[str, dict[str, list[float]]] = {
        case[0]: {"plain": []} | {p.name: [] for p in providers} for case in cases
    }
    for _ in range(options.repeats):
        for label, files, paths, trusted in cases:
            timings[label]["plain"].append(plain_run(files, paths))
            for sandbox in providers:
                timings[label][sandbox.name].append(sandboxed_run(sandbox, files, paths, trusted))

    print(f"median of {options.repeats} interleaved runs per case (seconds); ratio = sandboxed / plain subprocess")
    ratios: dict[str, list[float]] = {sandbox.name: [] for sandbox in providers}
    for label, by_kind in timings.items():
        plain = statistics.median(by_kind["plain"])
        parts = [f"plain {plain:.3f}"]
        for sandbox in providers:
            value = statistics.median(by_kind[sandbox.name])
            ratios[sandbox.name].append(value / plain)
            parts.append(f"{sandbox.name} {value:.3f} ({value / plain:.2f}x)")
        print(f"  {label:40s} " + "  ".join(parts))
    for name, values in ratios.items():
        print(f"{name}: median ratio {statistics.median(values):.2f}x (target <= 1.3x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
