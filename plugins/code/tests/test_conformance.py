"""The conformance kit on code/pybugs-v0 and code/pyfunc-v0: the oracle (reference patch)
scores 1 and the null policy (the untouched repository) 0 on every task, in the real sandbox."""

from __future__ import annotations

import tempfile

import pytest
from rolloutgym_testing import EnvConformanceTests

pytestmark = pytest.mark.sandbox


class _SandboxedConformance(EnvConformanceTests):
    @pytest.fixture(autouse=True)
    def _needs_sandbox(self, sandbox, tmp_path, monkeypatch):
        # A private temp dir: the leak check then sees only what these envs create, even
        # when other test sessions share /tmp.
        private = tmp_path / "tmp"
        private.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(private))
        return sandbox


class TestPybugsConformance(_SandboxedConformance):
    env_id = "code/pybugs-v0"


class TestPyfuncConformance(_SandboxedConformance):
    env_id = "code/pyfunc-v0"


class TestRepoBugsConformance(_SandboxedConformance):
    """code/repo-bugs-v0 on one task, the first of the test split (each episode runs a package's
    test files; the generator keeps a bug only when its tests pass before it and fail with it)."""

    env_id = "code/repo-bugs-v0"

    def task_ids(self) -> list[str]:
        from rolloutgym_code.repotasks.family import repo_bug_tasks

        tasks = repo_bug_tasks()
        first_of = {}
        for task in tasks:
            first_of.setdefault(task.split, task.id)
        return [first_of.get("test") or tasks[0].id]
