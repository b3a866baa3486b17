"""Running pytest in a sandbox with a verdict that the code under test cannot forge.

This is the in-sandbox harness: the agent's ``run_tests``, and grading with a provider
that has no ``start()``, use it. Grading with the built-in providers crosses a process
boundary instead (:mod:`rolloutgym_code._boundary`), so that the code under test never
shares a process with the tests or the verdict.

The sandbox runs a trusted *supervisor* (:mod:`rolloutgym_code._supervisor`), in which the
code under test never runs; it starts one pytest *worker* (:mod:`rolloutgym_code._worker`,
with the tamper checks of :mod:`rolloutgym_code._worker_checks`) and accepts from it exactly
one result batch authenticated with a key the worker received before any code under test ran.
The supervisor reports on its own stdout with a per-run nonce that only the host and the
supervisor know. Our ini file (``-c``) makes pytest ignore ini files in the workspace;
plugins from entry points, the cache and JUnit are off.

For grading runs, the hidden tests (and the original visible tests and ``conftest.py``
files) live in a read-only directory outside the workspace, their assertions rewritten to
compare exact plain types (:mod:`rolloutgym_code._hardening`), and every test function they
define must report a result. A run whose verdict is missing, unauthenticated or
inconsistent counts as no test passed.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ._hardening import GUARD_MODULE
from .sandbox import Sandbox, SandboxLimits, SandboxResult

__all__ = ["TestCaseResult", "TestRun", "clean_output", "run_pytest"]

CONFIG_NAME = ".rolloutgym-harness.json"
GUARD_DIR = ".rolloutgym"
_INI_NAME = f"{GUARD_DIR}/pytest.ini"
_RESERVED = ".rolloutgym"
_FALLBACK_DIR = ".rolloutgym-trusted"
_BATCH_BYTES = 4 << 20
_MESSAGE_LINES = 6


@dataclass(frozen=True)
class TestCaseResult:
    """One test: its id (``path::name``), outcome (passed, failed, error, skipped) and the
    first lines of its failure message."""

    __test__ = False  # not a pytest test class

    id: str
    outcome: str
    message: str = ""


@dataclass(frozen=True)
class TestRun:
    """The outcome of one pytest run.

    Attributes:
        cases: every test the report lists.
        sandbox: the raw sandbox result (exit code, capped output, limits hit).
        problem: why no usable report came back (None when one did).
    """

    __test__ = False

    cases: tuple[TestCaseResult, ...] = ()
    sandbox: SandboxResult | None = None
    problem: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> int:
        return sum(case.outcome == "passed" for case in self.cases)

    @property
    def total(self) -> int:
        """Tests that count: everything except skipped ones."""
        return sum(case.outcome != "skipped" for case in self.cases)

    @property
    def failures(self) -> list[TestCaseResult]:
        return [case for case in self.cases if case.outcome in ("failed", "error")]

    @property
    def fraction(self) -> float:
        return self.passed / self.total if self.total and self.problem is None else 0.0

    @property
    def all_passed(self) -> bool:
        return self.problem is None and self.total > 0 and self.passed == self.total

    def summary(self) -> str:
        """``"3/4 tests passed"`` or the problem."""
        if self.problem is not None:
            return self.problem
        return f"{self.passed}/{self.total} tests passed"

    def failure_report(self, *, limit: int = 8) -> str:
        """Failing test names with the first lines of their output."""
        lines = []
        for case in self.failures[:limit]:
            lines.append(f"- {case.id} ({case.outcome})" + (f": {case.message}" if case.message else ""))
        if len(self.failures) > limit:
            lines.append(f"- ... and {len(self.failures) - limit} more")
        return "\n".join(lines)


_TIMING = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d+:\d+\))?(?=(?: =+)?$)", re.MULTILINE)
_REPORT_LINE = re.compile(r"^-* generated xml file: .*$\n?", re.MULTILINE)


def clean_output(text: str) -> str:
    """pytest's output without run-specific noise (durations, the report path), so that the
    same repository always shows the same text."""
    return _TIMING.sub("", _REPORT_LINE.sub("", text))


def _first_lines(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    shown = " | ".join(lines[:_MESSAGE_LINES])
    return shown[:600]


def _source(name: str) -> str:
    from importlib.resources import files as package_files

    return package_files("rolloutgym_code").joinpath(name).read_text(encoding="utf-8")


_SOURCES: dict[str, str] = {}


def _harness_source(name: str) -> str:
    if name not in _SOURCES:
        _SOURCES[name] = _source(name)
    return _SOURCES[name]


def _ini(paths: str) -> bytes:
    return f"[pytest]\naddopts =\npythonpath = {paths}\nconsole_output_style = classic\n".encode()


def run_pytest(
    sandbox: Sandbox,
    files: Mapping[str, bytes],
    test_paths: Sequence[str],
    *,
    limits: SandboxLimits | None = None,
    trusted_tests: Mapping[str, bytes] | None = None,
    expected: Sequence[str] = (),
) -> TestRun:
    """Run ``pytest test_paths`` in ``sandbox`` on a copy of ``files``.

    The verdict comes from the trusted supervisor and the authenticated result batch (see
    :mod:`rolloutgym_code._supervisor` and :mod:`rolloutgym_code._worker`), never from
    files or output the code under test could write.

    Args:
        sandbox: where to run.
        files: the workspace (relative path to bytes); ``.rolloutgym*`` names are reserved.
        test_paths: what pytest runs: workspace paths, or paths of ``trusted_tests``.
        limits: sandbox limits (the whole run, both processes).
        trusted_tests: test files (hidden tests, original visible tests and conftest files)
            placed read-only outside the workspace; when given, this is a grading run (test
            paths name these files, process creation is refused to the code under test).
        expected: node-id prefixes (``path::name``) that must each have a result; a missing
            one is reported as a failed test.
    """
    limits = limits or SandboxLimits()
    grading = trusted_tests is not None
    workspace, trusted, trusted_root = _lay_out(sandbox, files, trusted_tests or {})
    workdir = getattr(sandbox, "workdir", None) if trusted_root != _FALLBACK_DIR else "."
    paths = [f"{trusted_root}/{path}" if grading else path for path in test_paths]
    rootdir = trusted_root if grading else (workdir if workdir != "." else ".")
    nonce = secrets.token_hex(16)
    config = _harness_config(nonce, limits, paths, rootdir=rootdir, trusted_root=trusted_root, grading=grading)
    workspace[CONFIG_NAME] = json.dumps(config).encode()
    command = [sandbox.python, "-I", "-B", "-c", _harness_source("_supervisor.py"), CONFIG_NAME]
    outer = _outer_limits(limits)
    if trusted_root == _FALLBACK_DIR:
        result = sandbox.run(command, files=workspace, limits=outer)
    else:
        result = sandbox.run(command, files=workspace, limits=outer, trusted_files=trusted)  # type: ignore[call-arg]
    return _interpret(result, nonce, expected)


def _lay_out(
    sandbox: Sandbox, files: Mapping[str, bytes], trusted_tests: Mapping[str, bytes]
) -> tuple[dict[str, bytes], dict[str, bytes], str]:
    """The workspace files, the trusted files (guard module, ini, trusted tests) and the
    folder the worker finds the trusted files in.

    A provider without a read-only directory gets the trusted files inside the workspace,
    under ``.rolloutgym-trusted``.
    """
    trusted_dir = getattr(sandbox, "trusted_dir", None)
    workdir = getattr(sandbox, "workdir", None)
    workspace = {name: data for name, data in files.items() if not name.startswith(_RESERVED)}
    trusted: dict[str, bytes] = {f"{GUARD_DIR}/{GUARD_MODULE}.py": _harness_source("_guard.py").encode()}
    for path, data in trusted_tests.items():
        trusted[path] = data
    if trusted_dir is None or workdir is None:
        # A provider without a read-only directory: the trusted files travel in the workspace.
        trusted[_INI_NAME] = _ini(". ../.. ../../src")  # relative to the ini file's folder
        workspace.update({f"{_FALLBACK_DIR}/{path}": data for path, data in trusted.items()})
        return workspace, trusted, _FALLBACK_DIR
    trusted[_INI_NAME] = _ini(f"{trusted_dir}/{GUARD_DIR} {workdir} {workdir}/src")
    return workspace, trusted, trusted_dir


def _harness_config(
    nonce: str, limits: SandboxLimits, paths: Sequence[str], *, rootdir: str, trusted_root: str, grading: bool
) -> dict:
    """What the supervisor reads from ``CONFIG_NAME``: its nonce, the worker's source and
    pytest arguments, and the worker's limits."""
    return {
        "nonce": nonce,
        "worker_source": _harness_source("_worker_checks.py") + _harness_source("_worker.py"),  # one script
        "worker": {
            "args": [
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:junitxml",
                "-p",
                "no:legacypath",
                "-c",
                f"{trusted_root}/{_INI_NAME}",
                f"--rootdir={rootdir}",
                "--tb=short",
                *paths,
            ],
            "grading": grading,
            "trusted_dir": trusted_root,
            "guard_module": GUARD_MODULE,
        },  # fmt: skip
        "deadline": max(0.5, limits.wall_seconds - 0.25),
        "keep_output_bytes": limits.keep_output_bytes,
        "max_output_bytes": limits.max_output_bytes,
    }


def _outer_limits(limits: SandboxLimits) -> SandboxLimits:
    """The sandbox's limits for the whole run: the worker's, plus room for the supervisor
    and the result batch."""
    return dataclasses.replace(
        limits,
        wall_seconds=limits.wall_seconds + 2.0,
        keep_output_bytes=8 * limits.keep_output_bytes + _BATCH_BYTES,
        max_output_bytes=max(limits.max_output_bytes, 8 * limits.keep_output_bytes + 2 * _BATCH_BYTES),
    )


def _interpret(result: SandboxResult, nonce: str, expected: Sequence[str]) -> TestRun:
    marker = f"ROLLOUTGYM-VERDICT {nonce} "
    verdict = None
    for line in result.output.splitlines():
        if line.startswith(marker):
            try:
                verdict = json.loads(line[len(marker) :])
            except ValueError:
                verdict = None
    if verdict is None:
        return TestRun(
            (),
            result,
            f"the test run ended without a verdict ({result.describe()}): {_first_lines(result.output)[:300]!r}",
        )
    worker = SandboxResult(
        exit_code=int(verdict.get("exit_code") or 0),
        output=str(verdict.get("output", "")),
        output_truncated=int(verdict.get("output_bytes", 0)) > len(str(verdict.get("output", "")).encode()),
        timed_out=bool(verdict.get("timed_out")),
        output_limit_exceeded=bool(verdict.get("output_limit_exceeded")),
        duration=float(verdict.get("duration", 0.0)),
        sandbox=result.sandbox,
    )
    if worker.timed_out or worker.output_limit_exceeded:
        return TestRun((), worker, f"the test run was {worker.describe()}")
    if verdict.get("problem"):
        return TestRun((), worker, str(verdict["problem"]))
    batch = verdict.get("batch")
    if not isinstance(batch, dict):
        return TestRun(
            (),
            worker,
            f"the test run produced no results ({worker.describe()}); output: {_first_lines(worker.output)[:300]!r}",
        )
    return _batch_run(batch, worker, expected)


def _batch_run(batch: dict, worker: SandboxResult, expected: Sequence[str]) -> TestRun:
    """The test run a result batch describes, checked for consistency (``expected``: node-id
    prefixes that must each have a result)."""
    cases, problem = _cases(batch)
    if problem is None and batch.get("tampering"):
        problem = "the code under test tampered with the test harness: " + "; ".join(map(str, batch["tampering"]))[:600]
    if problem is None:
        exit_status = batch.get("pytest_exit")
        problem = {
            2: "pytest was interrupted (often a test file failed to import)",
            3: "pytest hit an internal error",
            4: "pytest was called with bad arguments (a test path may not exist)",
            5: "no tests were collected",
        }.get(exit_status if isinstance(exit_status, int) else -1)
        if exit_status == 0 and any(case.outcome in ("failed", "error") for case in cases):
            problem = "pytest exited 0 although tests failed"
        elif exit_status not in (0, 1, 2, 3, 4, 5):
            problem = f"pytest ended unexpectedly ({exit_status})"
    missing = [prefix for prefix in expected if not any(_belongs(case.id, prefix) for case in cases)]
    cases = cases + tuple(TestCaseResult(prefix, "failed", "this test never ran") for prefix in missing)
    return TestRun(cases, worker, problem)


def _belongs(identifier: str, prefix: str) -> bool:
    return identifier == prefix or identifier.startswith(prefix + "[")


def _cases(batch: dict) -> tuple[tuple[TestCaseResult, ...], str | None]:
    """Test cases from the worker's batch, checked for consistency."""
    collected: list[str] | None = None
    cases: dict[str, TestCaseResult] = {}
    collect_errors: list[str] = []
    crash = None
    for line in batch.get("results", []):
        try:
            record = json.loads(line)
        except (TypeError, ValueError):
            return (), "an unreadable result (tampering)"
        kind = record.get("kind")
        if kind == "collected":
            if collected is not None:
                return (), "tests were collected twice (tampering)"
            collected = [str(identifier) for identifier in record.get("ids", [])]
        elif kind == "collect_error":
            collect_errors.append(f"{record.get('id')}: {record.get('message', '')}")
        elif kind == "crash":
            crash = str(record.get("message", ""))
        elif kind == "test":
            identifier = str(record.get("id"))
            if identifier in cases:
                return (), f"two results for {identifier} (tampering)"
            if collected is None or identifier not in collected:
                return (), f"a result for {identifier}, which was never collected (tampering)"
            outcome = str(record.get("outcome"))
            if outcome not in ("passed", "failed", "error", "skipped"):
                return (), "an unknown test outcome (tampering)"
            cases[identifier] = TestCaseResult(identifier, outcome, str(record.get("message", "")))
    ordered = tuple(cases[identifier] for identifier in (collected or []) if identifier in cases)
    if crash is not None:
        return ordered, f"the test run crashed: {crash}"
    if collect_errors:
        return ordered, "a test file could not be collected: " + " | ".join(collect_errors)[:600]
    if collected is not None and len(cases) != len(collected):
        missing = [identifier for identifier in collected if identifier not in cases]
        return ordered, f"{len(missing)} collected test(s) never reported a result (e.g. {missing[0]})"
    return ordered, None
