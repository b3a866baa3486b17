"""Grading a finished repository: hidden tests, visible tests and expected file contents.

The hidden tests exist only now, after the agent has finished, and never in the agent's
workspace or the sandbox. With a provider that has ``start()`` (the built-in ones) they run
with pytest in a trusted process on the host, together with the original visible tests and
``conftest.py`` files, against proxies of the agent's modules, which run in the sandbox
(:mod:`rolloutgym_code._boundary`): the task's own modules are proxied before any other
module of that name, modules only the agent added only when nothing on the trusted side
provides them. With another provider they run inside the sandbox from a read-only directory
(:func:`rolloutgym_code.testrun.run_pytest`). Either way the assertions of hidden tests are
rewritten to compare exact plain types, every ``conftest.py`` is removed from the copy of
the agent's files, one run covers hidden and visible tests, its results are split by file,
and a hidden test function that reports no result, or is skipped, counts as failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rolloutgym_protocol import Score

from ._boundary import module_names, run_across_boundary, supports_boundary
from ._hardening import expected_tests, harden_test_source
from .sandbox import Sandbox, SandboxLimits
from .testrun import TestCaseResult, TestRun, run_pytest

__all__ = ["GradingInput", "grade_repository", "normalise_text"]


@dataclass(frozen=True)
class GradingInput:
    """What the grader compares.

    Attributes:
        original_files: the repository the agent started from.
        final_files: the repository when the agent finished.
        hidden_tests: hidden test files (path to content), never shown to the agent.
        visible_tests: paths of the original visible tests.
        expected_files: path to expected content (``None``: the file must not exist).
    """

    original_files: Mapping[str, str]
    final_files: Mapping[str, str]
    hidden_tests: Mapping[str, str]
    visible_tests: Sequence[str]
    expected_files: Mapping[str, str | None]


def normalise_text(text: str) -> str:
    """CRLF to LF and exactly one final newline (editors and models differ on both)."""
    text = text.replace("\r\n", "\n")
    return text.rstrip("\n") + "\n" if text.strip() else ""


def _is_conftest(path: str) -> bool:
    return path == "conftest.py" or path.endswith("/conftest.py")


def _grading_files(grading: GradingInput) -> tuple[dict[str, bytes], dict[str, bytes], list[str]]:
    """(the agent's files without conftest.py, the trusted test files, the dropped conftest paths)."""
    files = {path: content for path, content in grading.final_files.items() if not _is_conftest(path)}
    dropped = [path for path in grading.final_files if _is_conftest(path) and path not in grading.original_files]
    test_directories = {
        path.rsplit("/", 1)[0] for path in [*grading.hidden_tests, *grading.visible_tests] if "/" in path
    }
    trusted: dict[str, str] = {}
    for path, content in grading.original_files.items():
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        if _is_conftest(path) or path in grading.visible_tests:
            trusted[path] = content
        elif path.endswith(".py") and directory in test_directories:
            trusted[path] = content  # the test folders' packages and helper modules
    for path, content in grading.hidden_tests.items():
        trusted[path] = harden_test_source(content) if path.endswith(".py") else content
    return (
        {path: content.encode("utf-8") for path, content in files.items()},
        {path: content.encode("utf-8") for path, content in trusted.items()},
        dropped,
    )


def _run_tests(
    sandbox: Sandbox,
    grading: GradingInput,
    files: dict[str, bytes],
    trusted: dict[str, bytes],
    test_paths: list[str],
    expected: list[str],
    limits: SandboxLimits | None,
) -> TestRun:
    """One run of every test: across the boundary when the provider can (the tests on the
    trusted side, the code in the sandbox), else in the sandbox with the hardened harness."""
    if not supports_boundary(sandbox):
        return run_pytest(sandbox, files, test_paths, limits=limits, trusted_tests=trusted, expected=expected)
    trusted_tops = {path.split("/", 1)[0].removesuffix(".py") for path in trusted}
    front = module_names(path for path in grading.original_files if path not in trusted) - trusted_tops
    back = module_names(files) - front - trusted_tops
    return run_across_boundary(
        sandbox, files, test_paths, trusted_tests=trusted, expected=expected, limits=limits, front=front, back=back
    )


def _split(run: TestRun, paths: Sequence[str]) -> TestRun:
    def belongs(case: TestCaseResult) -> bool:
        location = case.id.split("::", 1)[0]
        dotted = location.replace("/", ".").removesuffix(".py")
        return any(location == path or dotted == path.replace("/", ".").removesuffix(".py") for path in paths)

    return TestRun(tuple(case for case in run.cases if belongs(case)), run.sandbox, run.problem)


def _hidden_view(run: TestRun) -> TestRun:
    """Hidden tests: a skipped test is a test that did not pass."""
    cases = tuple(
        TestCaseResult(case.id, "failed", case.message or "skipped") if case.outcome == "skipped" else case
        for case in run.cases
    )
    return TestRun(cases, run.sandbox, run.problem)


def _tests_score(run: TestRun, label: str) -> Score:
    feedback = f"{label}: {run.summary()}"
    if run.failures:
        feedback += "\nfailing:\n" + run.failure_report()
    metadata = {"passed": run.passed, "total": run.total, "failing": [case.id for case in run.failures][:50]}
    if run.problem is not None:
        metadata["problem"] = run.problem
    return Score(run.fraction, metadata=metadata, feedback=feedback)


def _expected_score(grading: GradingInput) -> Score:
    mismatches = []
    for path, expected in sorted(grading.expected_files.items()):
        found = grading.final_files.get(path)
        if expected is None:
            if found is not None:
                mismatches.append(f"{path}: expected the file to be deleted, but it exists")
        elif found is None:
            mismatches.append(f"{path}: expected the file to exist, but it is missing")
        elif normalise_text(found) != normalise_text(expected):
            mismatches.append(
                f"{path}: content differs from the expected content ({_first_difference(expected, found)})"
            )
    matched = len(grading.expected_files) - len(mismatches)
    fraction = matched / len(grading.expected_files)
    feedback = f"expected files: {matched}/{len(grading.expected_files)} match" + (
        "".join(f"\n- {line}" for line in mismatches)
    )
    return Score(fraction, metadata={"mismatches": mismatches}, feedback=feedback)


def _first_difference(expected: str, found: str) -> str:
    expected_lines = normalise_text(expected).splitlines()
    found_lines = normalise_text(found).splitlines()
    for number, (want, got) in enumerate(zip(expected_lines, found_lines, strict=False), start=1):
        if want != got:
            return f"line {number}: expected {want.strip()[:80]!r}, found {got.strip()[:80]!r}"
    return f"expected {len(expected_lines)} lines, found {len(found_lines)}"


def grade_repository(grading: GradingInput, sandbox: Sandbox, *, limits: SandboxLimits | None = None) -> Score:
    """Score the final repository.

    The score is 1.0 when every required check passes, else 0.0: all hidden tests pass
    (when the task has hidden tests) and every expected file matches (when it lists them);
    a task with neither is graded by its visible tests. Components: ``hidden_tests``
    (fraction passed), ``hidden_all_pass``, ``visible_tests``, ``expected_files``.
    """
    components: dict[str, Score] = {}
    required: list[str] = []
    hidden_paths = sorted(grading.hidden_tests)
    visible_paths = [path for path in grading.visible_tests if path in grading.original_files]
    test_paths = hidden_paths + [path for path in visible_paths if path not in hidden_paths]
    notes = []
    if test_paths:
        files, trusted, dropped = _grading_files(grading)
        if dropped:
            notes.append(f"ignored conftest.py files the agent added: {', '.join(sorted(dropped))}")
        expected = [
            prefix
            for path in hidden_paths
            if path.endswith(".py")
            for prefix in expected_tests(path, grading.hidden_tests[path])
        ]
        run = _run_tests(sandbox, grading, files, trusted, test_paths, expected, limits)
        if hidden_paths:
            hidden = _hidden_view(_split(run, hidden_paths))
            components["hidden_tests"] = _tests_score(hidden, "hidden tests")
            components["hidden_all_pass"] = Score(
                float(hidden.all_passed),
                feedback="all hidden tests pass" if hidden.all_passed else "not every hidden test passes",
            )
            required.append("hidden_all_pass")
        if visible_paths:
            visible = _split(run, visible_paths)
            components["visible_tests"] = _tests_score(visible, "visible tests")
            if not hidden_paths and not grading.expected_files:
                components["visible_all_pass"] = Score(float(visible.all_passed))
                required.append("visible_all_pass")
    if grading.expected_files:
        components["expected_files"] = _expected_score(grading)
        required.append("expected_files")
    if not required:
        return Score(
            0.0,
            components,
            feedback="this task defines nothing to grade (no hidden tests, visible tests or expected files)",
        )
    value = float(all(components[name].value >= 1.0 for name in required))
    parts = [
        components[name].feedback
        for name in ("hidden_tests", "visible_tests", "expected_files")
        if name in components and components[name].feedback
    ]
    feedback = (
        ("passed: " if value else "failed: ")
        + "\n".join(part for part in parts if part)
        + "".join(f"\n{note}" for note in notes)
    )
    return Score(value, components, {"required": required}, feedback=feedback)
