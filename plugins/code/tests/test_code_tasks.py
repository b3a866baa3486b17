"""The shipped tasks are product: checked for shape, honest splits and, in the sandbox, that
every buggy repository fails its hidden tests while the reference patch passes them."""

from __future__ import annotations

import pytest
from rolloutgym_code.tasks import pybugs_tasks, pyfunc_tasks
from rolloutgym_code.testrun import run_pytest
from rolloutgym_code.workspace import Workspace

ALL_TASKS = [("pybugs", task) for task in pybugs_tasks()] + [("pyfunc", task) for task in pyfunc_tasks()]
CATEGORIES = {"parsing", "off-by-one", "date math", "caching", "rounding", "mutable defaults", "encoding"}


def _patched(task) -> dict[str, str]:
    workspace = Workspace(task.files)
    try:
        workspace.apply_patch(task.reference_patch)
        return workspace.text_files()
    finally:
        workspace.close()


def test_task_counts_categories_and_splits():
    bugs, functions = pybugs_tasks(), pyfunc_tasks()
    assert len(bugs) >= 25 and len(functions) >= 10
    assert {task.metadata["category"] for task in bugs} >= CATEGORIES
    for tasks in (bugs, functions):
        assert {task.split for task in tasks} == {"train", "dev", "test"}
        assert len({task.id for task in tasks}) == len(tasks)
        assert len({task.instruction for task in tasks}) == len(tasks)


@pytest.mark.parametrize("family, task", ALL_TASKS, ids=[task.id for _, task in ALL_TASKS])
def test_task_shape(family, task):
    assert 1 <= len(task.files) <= 5, f"{task.id}: {len(task.files)} files"
    assert task.hidden_tests, f"{task.id} has no hidden tests"
    assert not set(task.hidden_tests) & set(task.files), f"{task.id}: a hidden test shadows a repository file"
    assert all(path.startswith("tests/test_") for path in task.hidden_tests)
    assert task.metadata["skills"], f"{task.id}: say which skills the task exercises"
    patched = _patched(task)
    changed = sorted(path for path in patched if patched[path] != task.files.get(path))
    assert changed == task.metadata["changed_files"], f"{task.id}: the reference patch changes {changed}"
    if family == "pyfunc":
        assert task.visible_tests == ("tests/test_examples.py",)
        assert "raise NotImplementedError" in next(iter(task.files[path] for path in changed))


@pytest.mark.sandbox
@pytest.mark.parametrize("family, task", ALL_TASKS, ids=[task.id for _, task in ALL_TASKS])
def test_buggy_repository_fails_the_hidden_tests(sandbox, family, task):
    """The buggy (or unimplemented) repository fails at least one hidden test, while its
    visible tests pass (pybugs: they do not give the bug away). That the reference patch
    passes every hidden test is checked on every task by the conformance kit's oracle test
    (test_conformance.py), through the env's own apply_patch tool."""
    hidden_paths = sorted(task.hidden_tests)
    files = {path: content.encode() for path, content in {**task.files, **task.hidden_tests}.items()}
    before = run_pytest(sandbox, files, hidden_paths + list(task.visible_tests))
    assert before.problem is None or before.problem.startswith("pytest was interrupted"), before.problem
    hidden_failures = [case for case in before.failures if case.id.split("::")[0] in hidden_paths]
    assert hidden_failures, f"{task.id}: the buggy repository passes every hidden test"
    if family == "pybugs":
        visible_failures = [case.id for case in before.failures if case.id.split("::")[0] in task.visible_tests]
        assert not visible_failures, f"{task.id}: visible tests already fail before the fix: {visible_failures}"
    hidden_cases = [case for case in before.cases if case.id.split("::")[0] in hidden_paths]
    assert len(hidden_cases) >= 2, f"{task.id}: grade with more than one hidden test"
