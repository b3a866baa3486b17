"""From a project to kept bugs: run its tests, make candidate bugs, keep those its tests catch.

1. The baseline: every test file runs twice in the sandbox; the first run records which of
   the project's functions each test calls. A file with a failing or flaky test is left out;
   a suite that mostly fails, does not run, or needs a module the sandbox lacks is refused.
2. Candidates (:mod:`.mutate`) only in functions some passing test calls, without equivalent
   programs (one per normalised AST), in a seeded order that takes the operators in turn.
3. A candidate is kept when its module still imports and at least one test that passed now
   fails or errors (only the files of the tests that call its function run).
"""

from __future__ import annotations

import difflib
import random
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from .mutate import OPERATORS, CodeMutation, apply_mutation, find_mutations, normalised_hash
from .project import Project, RepoTaskError
from .runner import ProjectRunner, TestOutcomes

__all__ = ["Bug", "Generation", "generate_bugs"]

_MAX_PER_FUNCTION = 2


@dataclass(frozen=True)
class Bug:
    """A kept candidate: the module's buggy text, the tests it breaks and their messages."""

    mutation: CodeMutation
    module: str
    buggy: str
    failing: dict[str, str]
    digest: str

    def lines_touched(self, original: str) -> int:
        diff = difflib.unified_diff(original.splitlines(), self.buggy.splitlines(), lineterm="", n=0)
        return sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))


@dataclass
class Generation:
    """What a generation found: the kept bugs, the baseline and the counts for the benchmark."""

    project: Project
    bugs: list[Bug] = field(default_factory=list)
    passed: dict[str, list[str]] = field(default_factory=dict)  # usable test file -> its passing tests
    baseline_seconds: float = 0.0
    candidates: int = 0
    tried: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    sandbox_cpu_seconds: float = 0.0  # the test runs' CPU in the sandbox (pytest's processes)
    excluded_files: dict[str, str] = field(default_factory=dict)


def _file_of(test: str) -> str:
    return test.split("::", 1)[0]


def _refuse_baseline(project: Project, run: TestOutcomes) -> None:
    if run.problem:
        raise RepoTaskError(f"{project.name}: its test suite did not run in the sandbox ({run.problem})")
    passed = run.with_outcome("passed")
    broken = run.with_outcome("failed") + run.with_outcome("error")
    missing = [
        message for test, (_, message) in run.outcomes.items() if "ModuleNotFoundError" in message and test in broken
    ]
    if not passed and missing:
        raise RepoTaskError(f"{project.name}: its tests need a module the sandbox's Python lacks ({missing[0][:120]})")
    if not passed:
        raise RepoTaskError(f"{project.name}: no test passes before any change; it cannot grade a fix")
    if len(broken) > len(passed):
        raise RepoTaskError(
            f"{project.name}: {len(broken)} of {len(broken) + len(passed)} tests fail before any change "
            f"(first: {broken[0][:100]}); choose another version or package"
        )


def _usable_files(project: Project, first: TestOutcomes, second: TestOutcomes, generation: Generation) -> None:
    bad: dict[str, str] = {}
    for test, (outcome, message) in first.outcomes.items():
        path = _file_of(test.removeprefix("collect::"))
        if outcome in ("failed", "error"):
            bad.setdefault(path, f"fails before any change: {test} {message[:80]}")
        elif second.outcomes.get(test, ("missing", ""))[0] != outcome:
            bad.setdefault(path, f"flaky: {test}")
    passed: dict[str, list[str]] = defaultdict(list)
    for test in first.with_outcome("passed"):
        if _file_of(test) not in bad:
            passed[_file_of(test)].append(test)
    generation.passed = dict(sorted(passed.items()))
    generation.excluded_files = dict(sorted(bad.items()))
    if not generation.passed:
        raise RepoTaskError(f"{project.name}: every test file has a failing or flaky test; it cannot grade a fix")


def _ordered_candidates(project: Project, callers: dict[tuple[str, int], set[str]], seed: int) -> list[CodeMutation]:
    rng = random.Random(seed)
    by_operator: dict[str, list[tuple[str, CodeMutation]]] = defaultdict(list)
    for path in project.modules:
        try:
            mutations = find_mutations(project.files[path])
        except (SyntaxError, ValueError, RecursionError):
            continue
        for mutation in mutations:
            if (path, mutation.function_line) in callers:
                by_operator[mutation.operator].append((path, mutation))
    ordered: list[CodeMutation] = []
    queues = []
    for operator in OPERATORS:
        queue = by_operator.get(operator, [])
        rng.shuffle(queue)
        queues.append(queue)
    while any(queues):
        for queue in queues:
            if queue:
                path, mutation = queue.pop()
                ordered.append(_tag(mutation, path))
    return ordered


def _tag(mutation: CodeMutation, path: str) -> CodeMutation:
    # The module's path rides in the function name's prefix until the candidate is evaluated.
    return CodeMutation(
        mutation.operator,
        f"{path}::{mutation.function}",
        mutation.line,
        mutation.start,
        mutation.end,
        mutation.replacement,
        mutation.function_line,
    )


def _callers(baseline: TestOutcomes, passed: dict[str, list[str]]) -> dict[tuple[str, int], set[str]]:
    usable = {test for tests in passed.values() for test in tests}
    callers: dict[tuple[str, int], set[str]] = defaultdict(set)
    for test, calls in baseline.calls.items():
        if test in usable:
            for call in calls:
                callers[call].add(test)
    return callers


def generate_bugs(
    project: Project,
    *,
    seed: int = 0,
    max_tasks: int = 25,
    max_candidates: int | None = None,
    provider: str = "bwrap",
    suite_timeout: float = 300.0,
    progress: Callable[[str], None] | None = None,
) -> Generation:
    """Run the baseline and evaluate candidates until ``max_tasks`` bugs are kept.

    Raises:
        RepoTaskError: the project's tests do not run, fail before any change, or are too slow.
    """
    say = progress or (lambda message: None)
    started = time.perf_counter()
    generation = Generation(project)
    with ProjectRunner(project, provider=provider) as runner:
        first = runner.run_tests(project.tests, timeout=suite_timeout, trace=True)
        _refuse_baseline(project, first)
        second = runner.run_tests(project.tests, timeout=suite_timeout)
        generation.sandbox_cpu_seconds += first.cpu_seconds + second.cpu_seconds
        generation.baseline_seconds = second.seconds
        _usable_files(project, first, second, generation)
        say(
            f"{project.name} {project.version}: {sum(map(len, generation.passed.values()))} passing tests in "
            f"{len(generation.passed)} files ({second.seconds:.1f} s a run; baseline done after "
            f"{time.perf_counter() - started:.0f} s)"
        )
        callers = _callers(first, generation.passed)
        candidates = _ordered_candidates(project, callers, seed)
        generation.candidates = len(candidates)
        limit = max_candidates if max_candidates is not None else max(4 * max_tasks, 20)
        per_function: dict[str, int] = defaultdict(int)
        seen = {normalised_hash(project.files[path]) for path in project.modules}
        for tagged in candidates:
            if len(generation.bugs) >= max_tasks or generation.tried >= limit:
                break
            path, function = tagged.function.split("::", 1)
            if per_function[tagged.function] >= _MAX_PER_FUNCTION:
                continue
            mutation = CodeMutation(
                tagged.operator,
                function,
                tagged.line,
                tagged.start,
                tagged.end,
                tagged.replacement,
                tagged.function_line,
            )
            digest = normalised_hash(apply_mutation(project.files[path], mutation))
            if digest is None or digest in seen:
                continue  # equivalent to the original or to a candidate already tried
            seen.add(digest)
            bug, reason = _evaluate(runner, generation, path, mutation, callers, second.seconds)
            generation.tried += 1
            if bug is None:
                generation.rejected[reason] = generation.rejected.get(reason, 0) + 1
                continue
            per_function[tagged.function] += 1
            generation.bugs.append(bug)
            say(
                f"  kept {len(generation.bugs)}/{max_tasks}: {mutation.operator} in {path}:{mutation.line} "
                f"({generation.tried} tried, {time.perf_counter() - started:.0f} s)"
            )
    generation.seconds = time.perf_counter() - started
    return generation


def _evaluate(
    runner: ProjectRunner,
    generation: Generation,
    path: str,
    mutation: CodeMutation,
    callers: dict[tuple[str, int], set[str]],
    suite_seconds: float,
) -> tuple[Bug | None, str]:
    covering = callers.get((path, mutation.function_line), set())
    files = sorted({_file_of(test) for test in covering})
    buggy = apply_mutation(generation.project.files[path], mutation)
    run = runner.run_tests(files, timeout=2 * suite_seconds + 10, changed={path: buggy})
    generation.sandbox_cpu_seconds += run.cpu_seconds
    if run.import_failed:
        return None, "module does not import"
    if run.problem:
        return None, "tests ran too long" if "past" in run.problem else "no test report"
    if run.collect_errors:
        return None, "a test file no longer collects"
    expected = {test for file in files for test in generation.passed.get(file, [])}
    failing = {
        test: message for test, (outcome, message) in run.outcomes.items() if test in expected and outcome != "passed"
    }
    failing.update({test: "the test did not run" for test in expected - set(run.outcomes)})
    if not failing:
        return None, "no test fails (equivalent or untested change)"
    digest = normalised_hash(buggy) or ""
    return Bug(mutation, path, buggy, dict(sorted(failing.items())), digest), "kept"
