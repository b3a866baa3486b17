"""Running pytest in a sandbox and reading its JUnit XML report.

The command is ``python -I -B -m pytest`` with a configuration file we write (so ini files
the agent wrote are ignored), no cache, plugins from entry points disabled, and a JUnit XML
report collected from the sandbox. Results come from that report, never from the text
output, and a run that produced no report counts as no test passed.
"""

from __future__ import annotations

import re
import secrets
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .sandbox import Sandbox, SandboxLimits, SandboxResult

__all__ = ["REPORT_PREFIX", "TestCaseResult", "TestRun", "clean_output", "run_pytest"]

REPORT_PREFIX = ".rolloutgym-report"
CONFIG_NAME = ".rolloutgym-pytest.ini"
_CONFIG = "[pytest]\naddopts =\njunit_family = xunit1\npythonpath = . src\n"
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


def _parse_report(data: bytes) -> tuple[TestCaseResult, ...]:
    root = ElementTree.fromstring(data)
    cases = []
    for element in root.iter("testcase"):
        name = element.get("name", "?")
        location = element.get("file") or element.get("classname", "")
        identifier = f"{location}::{name}" if location else name
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            child = element.find(tag)
            if child is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                details = (child.text or "").strip()
                message = _first_lines("\n".join(part for part in (child.get("message", ""), details) if part))
                break
        cases.append(TestCaseResult(identifier, outcome, message))
    return tuple(cases)


def run_pytest(
    sandbox: Sandbox,
    files: Mapping[str, bytes],
    test_paths: Sequence[str],
    *,
    limits: SandboxLimits | None = None,
) -> TestRun:
    """Run ``pytest test_paths`` in ``sandbox`` on a copy of ``files``.

    The files keep their relative paths; our ini file and the report live at the top level
    and replace any agent file with the same name.
    """
    # A fresh report name per run: code under test cannot simply leave a forged report in place.
    report_name = f"{REPORT_PREFIX}-{secrets.token_hex(8)}.xml"
    workspace = {
        name: data for name, data in files.items() if name != CONFIG_NAME and not name.startswith(REPORT_PREFIX)
    }
    workspace[CONFIG_NAME] = _CONFIG.encode()
    command = [
        sandbox.python, "-I", "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "-c", CONFIG_NAME, "--rootdir=.", f"--junitxml={report_name}", "--tb=short", "-o", "console_output_style=classic",
        *test_paths,
    ]  # fmt: skip
    result = sandbox.run(
        command,
        files=workspace,
        limits=limits,
        collect=[report_name],
        environment={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    report = result.files.get(report_name)
    if result.timed_out or result.output_limit_exceeded or result.exit_code < 0:
        return TestRun(_safe_parse(report), result, f"the test run was {result.describe()}")
    if report is None:
        return TestRun(
            (),
            result,
            f"the test run produced no report ({result.describe()}); output: {_first_lines(result.output)[:300]!r}",
        )
    try:
        cases = _parse_report(report)
    except ElementTree.ParseError as exc:
        return TestRun((), result, f"the test report could not be read ({exc})")
    if result.exit_code not in (0, 1):
        problem = {
            2: "pytest was interrupted (often a test file failed to import)",
            3: "pytest hit an internal error",
            4: "pytest was called with bad arguments (a test path may not exist)",
            5: "no tests were collected",
        }.get(result.exit_code, f"pytest {result.describe()}")
        return TestRun(cases, result, problem)
    if result.exit_code == 0 and any(case.outcome in ("failed", "error") for case in cases):
        return TestRun(cases, result, "pytest exited 0 although its report lists failures")
    if result.exit_code == 1 and not any(case.outcome in ("failed", "error") for case in cases):
        return TestRun(cases, result, "pytest exited 1 but its report lists no failure")
    return TestRun(cases, result)


def _safe_parse(report: bytes | None) -> tuple[TestCaseResult, ...]:
    if report is None:
        return ()
    try:
        return _parse_report(report)
    except ElementTree.ParseError:
        return ()
