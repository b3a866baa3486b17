"""Running a project's tests in a sandbox of :mod:`rolloutgym.sandboxes` (``bwrap`` by default).

The project's files are written once into the sandbox's working folder (``/app``); each
candidate bug rewrites one module, runs an import check and the test files with the
sandbox's ``python3 -m pytest`` (no network, an unprivileged uid), reads the outcome of every
test from the JSON that the ``rg_report`` plugin writes, and puts the module back. The
project's own pytest ``addopts`` are not used (they often name plugins that are not there).
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files as package_files
from typing import Any

from .project import Project, RepoTaskError

__all__ = ["PYTEST_FLAGS", "ProjectRunner", "TestOutcomes", "pytest_command", "reporter_source"]

WORKDIR = "/app"
_SUPPORT = ".rolloutgym-gen"
_IMPORT_FAILED = 97
# The same flags in generation and in the verifier (tests/grade.py reads them from grading.json).
PYTEST_FLAGS = ("-p", "rg_report", "-p", "no:cacheprovider", "-o", "addopts=", "-q", "--color=no")


def reporter_source() -> str:
    """The ``rg_report`` pytest plugin (stdlib only)."""
    return package_files("rolloutgym_code.repotasks").joinpath("data/rg_report.py").read_text(encoding="utf-8")


def pytest_command(test_files: Sequence[str], report: str, *, trace: str | None = None) -> str:
    """The pytest command line (sh) that runs ``test_files`` and writes outcomes to ``report``
    (with ``trace``, a folder, also the functions under it that each test called)."""
    quoted = " ".join(shlex.quote(path) for path in test_files)
    tracing = f"RG_TRACE={shlex.quote(trace)} " if trace else ""
    flags = " ".join(PYTEST_FLAGS)
    return (
        f"rm -f {shlex.quote(report)}; {tracing}RG_REPORT={shlex.quote(report)} python3 -m pytest {flags} "
        f"--rootdir={WORKDIR} {quoted} > /dev/null 2>&1; RG_STATUS=$?; "
        f'test -f {shlex.quote(report)} || echo "pytest wrote no report (exit $RG_STATUS)"'
    )


@dataclass(frozen=True)
class TestOutcomes:
    """Each test's outcome (``passed``/``failed``/``error``/``skipped``) and message."""

    __test__ = False

    outcomes: Mapping[str, tuple[str, str]]
    seconds: float
    calls: Mapping[str, frozenset[tuple[str, int]]] = field(default_factory=dict)
    cpu_seconds: float = 0.0  # pytest's process in the sandbox
    import_failed: bool = False
    problem: str | None = None

    def with_outcome(self, outcome: str) -> list[str]:
        return sorted(test for test, (found, _) in self.outcomes.items() if found == outcome)

    @property
    def collect_errors(self) -> list[str]:
        return sorted(test for test in self.outcomes if test.startswith("collect::"))


class ProjectRunner:
    """One sandbox holding the project for the whole generation.

    Args:
        project: the project.
        provider: a :mod:`rolloutgym.sandboxes` provider name (``bwrap``).
    """

    def __init__(self, project: Project, *, provider: str = "bwrap") -> None:
        from rolloutgym.sandboxes import ResourceLimits, SandboxInfraError, SandboxUnsupported, get_provider

        self.project = project
        try:
            self._provider = get_provider(provider)
            self._box: Any = self._provider.create(
                workdir=WORKDIR, limits=ResourceLimits(memory_bytes=2 << 30, pids=256), env=self._environment()
            )
        except (SandboxInfraError, SandboxUnsupported, LookupError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RepoTaskError(
                f"the tests cannot run in the {provider!r} sandbox ({reason}); the bwrap provider runs them"
            ) from None
        self._box.write_files({path: text.encode("utf-8") for path, text in project.files.items()}, WORKDIR)
        self._box.write_files({f"{_SUPPORT}/rg_report.py": reporter_source().encode("utf-8")}, WORKDIR)

    def _environment(self) -> dict[str, str]:
        root = f"{WORKDIR}/{self.project.source_root}" if self.project.source_root else WORKDIR
        paths = [f"{WORKDIR}/{_SUPPORT}", root] + ([WORKDIR] if root != WORKDIR else [])
        return {"PYTHONPATH": ":".join(paths), "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/tmp", "LC_ALL": "C.UTF-8"}

    def run_tests(
        self,
        test_files: Sequence[str],
        *,
        timeout: float,
        changed: Mapping[str, str] | None = None,
        trace: bool = False,
    ) -> TestOutcomes:
        """Run ``test_files`` with ``changed`` modules (path to text) in place of the originals
        (``trace``: also record which project functions each test called)."""
        changed = dict(changed or {})
        report = f"{WORKDIR}/{_SUPPORT}/report.json"
        imports = [self.project.module_name(path) for path in changed if path.endswith(".py")]
        check = ""
        if imports:
            names = ", ".join(repr(name) for name in imports)
            script = f"import importlib\nfor name in [{names}]:\n    importlib.import_module(name)\n"
            check = f"python3 -c {shlex.quote(script)} > /dev/null 2>&1 || exit {_IMPORT_FAILED}; "
        if changed:
            self._box.write_files({path: text.encode("utf-8") for path, text in changed.items()}, WORKDIR)
        started = time.perf_counter()
        try:
            result = self._box.exec(
                check + pytest_command(test_files, report, trace=f"{WORKDIR}/" if trace else None), timeout=timeout
            )
        finally:
            if changed:
                originals = {path: self.project.files[path].encode("utf-8") for path in changed}
                self._box.write_files(originals, WORKDIR)
        seconds = time.perf_counter() - started
        if result.exit_code == _IMPORT_FAILED:
            return TestOutcomes({}, seconds, import_failed=True, problem="the changed module does not import")
        if result.timed_out:
            return TestOutcomes({}, seconds, problem=f"the tests ran past {timeout:.0f} s")
        data = self._box.read_files([report]).get(report)
        if data is None:
            return TestOutcomes({}, seconds, problem=(result.output or "pytest wrote no report").strip()[:200])
        raw = json.loads(data.decode("utf-8"))
        cpu = float(raw.pop("__cpu__", 0.0))
        calls = {
            str(test): frozenset((str(path), int(line)) for path, line in found)
            for test, found in raw.pop("__calls__", {}).items()
        }
        outcomes = {str(test): (str(value[0]), str(value[1])) for test, value in raw.items()}
        return TestOutcomes(outcomes, seconds, calls, cpu)

    def close(self) -> None:
        self._box.destroy()
        self._provider.close()

    def __enter__(self) -> ProjectRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
