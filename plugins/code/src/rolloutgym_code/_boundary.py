"""Grading across a process boundary: hidden tests on the trusted side, the code in the sandbox.

:func:`run_across_boundary` starts two processes and connects them with two pipes:

* in the sandbox, the server of :mod:`rolloutgym_code._bridge_server` with the agent's
  files (and nothing else: no hidden test, no expected value, no verdict, no key);
* on the host, the trusted runner of :mod:`rolloutgym_code._trusted_runner`: pytest on the
  hidden tests (and the original visible tests and conftest files) in a private folder,
  with the modules of the code under test replaced by proxies (:mod:`rolloutgym_code._bridge`).

Only JSON lines cross from the sandbox, and the runner builds plain values from them;
every assertion runs in the runner. The runner writes the results to a file in its
private folder; the host reads them when it ends, and kills the sandbox.

A provider qualifies when it has ``start()`` (the built-in ``bwrap`` and ``unshare`` do);
others keep the in-sandbox harness of :mod:`rolloutgym_code.testrun`.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence

from ._hardening import GUARD_MODULE
from .sandbox import Sandbox, SandboxLimits, SandboxResult
from .testrun import TestRun, _batch_run, _harness_source

__all__ = ["module_names", "run_across_boundary", "supports_boundary"]

_STARTUP_SECONDS = 15.0  # the runner's own start (pytest's import) on a loaded machine
_INI = "[pytest]\naddopts =\nconsole_output_style = classic\n"
# The trusted side of the bridge, copied as the package _rolloutgym_bridge (they import each other).
_BRIDGE_SOURCES = ("_bridge.py", "_bridge_proxies.py", "_bridge_wire.py")


@functools.cache
def _runner_python() -> str | None:
    """The interpreter of the trusted runner: this one, when it has pytest."""
    import importlib.util

    return sys.executable if importlib.util.find_spec("pytest") is not None else None


def supports_boundary(sandbox: Sandbox) -> bool:
    """Whether grading on ``sandbox`` can keep the hidden tests out of the sandbox."""
    return callable(getattr(sandbox, "start", None)) and _runner_python() is not None


def module_names(paths: Iterable[str]) -> set[str]:
    """Top-level module names that ``paths`` (``.py`` files, at the root or under ``src/``) define."""
    names = set()
    for path in paths:
        if not path.endswith(".py"):
            continue
        parts = path.split("/")
        if parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        name = parts[0].removesuffix(".py") if len(parts) == 1 else parts[0]
        if name.isidentifier() and name != "conftest":
            names.add(name)
    return names


def _write(directory: str, files: Mapping[str, bytes]) -> None:
    from ._paths import check_relative_path

    for name, data in files.items():
        target = os.path.join(directory, *check_relative_path(name).parts)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)


def run_across_boundary(
    sandbox: Sandbox,
    files: Mapping[str, bytes],
    test_paths: Sequence[str],
    *,
    trusted_tests: Mapping[str, bytes],
    expected: Sequence[str] = (),
    limits: SandboxLimits | None = None,
    front: Iterable[str] = (),
    back: Iterable[str] = (),
) -> TestRun:
    """Run ``pytest test_paths`` on the trusted side against ``files`` in ``sandbox``.

    Args:
        sandbox: a provider with ``start()``.
        files: the agent's files (relative path to bytes); they go into the sandbox only.
        test_paths: paths of ``trusted_tests`` to run.
        trusted_tests: test files (hidden tests, original visible tests, conftest files);
            they stay on the host.
        expected: node-id prefixes that must each have a result.
        limits: the sandbox's limits; ``wall_seconds`` bounds the whole run.
        front: module names that are the code under test's (proxied before any other finder).
        back: module names proxied only when nothing on the trusted side provides them.
    """
    limits = limits or SandboxLimits()
    directory = tempfile.mkdtemp(prefix="rolloutgym-trusted-")
    try:
        tests = os.path.join(directory, "tests")
        support = os.path.join(directory, "support")
        os.mkdir(tests)
        _write(tests, trusted_tests)
        _write(support, {
            "_rolloutgym_bridge/__init__.py": b"",
            **{f"_rolloutgym_bridge/{name}": _harness_source(name).encode() for name in _BRIDGE_SOURCES},
            f"{GUARD_MODULE}.py": _harness_source("_guard.py").encode(),
            "pytest.ini": _INI.encode(),
        })  # fmt: skip
        command = [sandbox.python, "-I", "-B", "-c", _harness_source("_bridge_server.py")]
        process = sandbox.start(command, files=dict(files), limits=limits)  # type: ignore[attr-defined]
        try:
            outcome = _run_runner(directory, process, test_paths, limits, sorted(set(front)), sorted(set(back)))
        finally:
            diagnostics = process.close()
        return _result(directory, outcome, diagnostics, sandbox, expected)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _run_runner(directory: str, process, test_paths, limits: SandboxLimits, front, back) -> dict:
    config = {
        "support": os.path.join(directory, "support"),
        "read_fd": process.from_sandbox,
        "write_fd": process.to_sandbox,
        "seconds": limits.wall_seconds,
        "front": front,
        "back": back,
        "result": os.path.join(directory, "result.json"),
        "args": [
            "-q", "-p", "no:cacheprovider", "-p", "no:junitxml", "-p", "no:legacypath",
            "-c", os.path.join(directory, "support", "pytest.ini"), f"--rootdir={os.path.join(directory, 'tests')}",
            f"--confcutdir={os.path.join(directory, 'tests')}",
            "--tb=short", *[os.path.join(directory, "tests", path) for path in test_paths],
        ],
    }  # fmt: skip
    os.mkdir(os.path.join(directory, "tmp"))
    config_path = os.path.join(directory, "config.json")
    with open(config_path, "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    environment = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": directory,
        "TMPDIR": os.path.join(directory, "tmp"),  # tmp_path and tempfile stay in the private folder
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
        "TZ": "UTC",
    }
    started = time.monotonic()
    with open(os.path.join(directory, "output"), "w+b") as output:
        runner = subprocess.Popen(
            [str(_runner_python()), "-I", "-B", "-c", _harness_source("_trusted_runner.py"), config_path],
            cwd=os.path.join(directory, "tests"),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=environment,
            pass_fds=(process.from_sandbox, process.to_sandbox),
            start_new_session=True,
        )
        process.release_channel()
        timed_out = False
        try:
            runner.wait(timeout=limits.wall_seconds + _STARTUP_SECONDS)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(runner.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            runner.wait()
        output.seek(0)
        text = output.read(limits.keep_output_bytes).decode("utf-8", "replace")
    return {
        "exit_code": runner.returncode,
        "timed_out": timed_out,
        "output": text,
        "duration": time.monotonic() - started,
    }


def _result(directory: str, outcome: dict, diagnostics: str, sandbox: Sandbox, expected: Sequence[str]) -> TestRun:
    runner = SandboxResult(
        exit_code=outcome["exit_code"],
        output=outcome["output"],
        timed_out=outcome["timed_out"],
        duration=outcome["duration"],
        sandbox=getattr(sandbox, "name", ""),
    )
    if outcome["timed_out"]:
        return TestRun((), runner, f"the test run was {runner.describe()}")
    try:
        with open(os.path.join(directory, "result.json"), encoding="utf-8") as handle:
            batch = json.load(handle)
    except (OSError, ValueError):
        detail = (outcome["output"].strip()[-300:] or diagnostics.strip()[:300]) or runner.describe()
        return TestRun((), runner, f"the trusted test runner ended without results: {detail!r}")
    return _batch_run(batch, runner, expected)
