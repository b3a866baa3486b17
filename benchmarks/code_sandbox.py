"""Code environments: a sandboxed grading run against a plain subprocess pytest run.

For a few ``code/pybugs-v0`` tasks (buggy and fixed repository), time

* baseline: write the files to a fresh temp directory and run
  ``python -I -B -m pytest ...`` on the hidden tests there as a plain subprocess (the
  interpreter that grades, i.e. this one; ``--baseline-python`` for another), then read
  the JUnit report and delete the directory;
* rolloutgym (default): a grading run across the boundary (``_boundary.run_across_boundary``,
  what ``grade_repository`` does with the built-in providers): the agent's files in the
  sandbox behind the bridge server, the hidden tests (exact-type assertions) with pytest in
  a trusted host process against proxies of the agent's modules;
* ``--in-sandbox``: the in-sandbox harness instead (``run_pytest`` with the hidden tests as
  trusted files: supervisor, pytest worker, authenticated batch), which providers without
  ``start()`` use.

Samples are interleaved and the median per task is compared (target: sandboxed <= 1.3x on
a quiet machine). The load average is printed with the figures: on a busy machine the
sandbox's extra processes wait longer for a core than the baseline's single one.

Run: ``python benchmarks/code_sandbox.py`` (``--repeats`` for more samples).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from rolloutgym_code._boundary import module_names, run_across_boundary
from rolloutgym_code._hardening import harden_test_source
from rolloutgym_code.sandbox import SandboxUnavailable, get_sandbox
from rolloutgym_code.tasks import pybugs_tasks
from rolloutgym_code.testrun import run_pytest
from rolloutgym_code.workspace import Workspace

PYTHON = sys.executable
CONFIG_NAME = "pytest.ini"
CONFIG = "[pytest]\naddopts =\njunit_family = xunit1\npythonpath = . src\n"


def plain_run(files: dict[str, bytes], paths: list[str], python: str = PYTHON) -> float:
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
            python,
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


def sandboxed_run(sandbox, case: dict, in_sandbox: bool) -> float:
    started = time.perf_counter()
    if in_sandbox:
        result = run_pytest(sandbox, case["workspace"], case["paths"], trusted_tests=case["trusted"])
    else:
        result = run_across_boundary(
            sandbox,
            case["workspace"],
            case["paths"],
            trusted_tests=case["trusted"],
            front=module_names(case["workspace"]),
        )
    assert result.cases and result.problem is None, result.problem
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
    parser.add_argument("--in-sandbox", action="store_true", help="time the in-sandbox harness instead")
    parser.add_argument("--baseline-python", default=PYTHON, help="interpreter of the plain pytest baseline")
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
            workspace = {path: content.encode() for path, content in repository.items()}
            trusted = {path: harden_test_source(task.hidden_tests[path]).encode() for path in paths}
            plain = {**workspace, **{path: task.hidden_tests[path].encode() for path in paths}}
            cases.append({"label": f"{task.id} ({label})", "workspace": workspace, "trusted": trusted, "paths": paths,
                          "plain": plain})  # fmt: skip

    load_before = os.getloadavg()
    timings: dict[str, dict[str, list[float]]] = {
        case["label"]: {"plain": []} | {p.name: [] for p in providers} for case in cases
    }
    for _ in range(options.repeats):
        for case in cases:
            timings[case["label"]]["plain"].append(plain_run(case["plain"], case["paths"], options.baseline_python))
            for sandbox in providers:
                timings[case["label"]][sandbox.name].append(sandboxed_run(sandbox, case, options.in_sandbox))

    mode = "in-sandbox harness" if options.in_sandbox else "grading across the boundary"
    print(f"{mode}; baseline: plain pytest with {options.baseline_python}")
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
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
