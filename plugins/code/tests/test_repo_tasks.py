"""``rolloutgym tasks make-repo`` end to end (issue 43), on a small project of the test's own.

One generation (three tasks, bubblewrap) is shared by the module: the tasks load as a Harbor
task set, the oracle (the reverse patch) scores 1 and the untouched repository 0 on each; the
agent's shell sees neither the hidden test files, ``tests/`` nor ``solution/``; a fix that also
rewrites the tests or adds a ``conftest.py`` does not pass; the same seed gives the same tasks;
bad input is a one-line reason with nothing written.
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import rolloutgym
from rolloutgym.sources import resolve_env
from rolloutgym_code.repotasks import RepoTaskError, make_repo_tasks
from rolloutgym_code.testing import require_sandbox

MODULE = '''"""Small numeric helpers."""


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    total = 0
    for value in values:
        total += value
    return total / len(values)


def windows(items, size):
    return [items[index : index + size] for index in range(len(items) - size + 1)]
'''

TESTS_CLAMP = """from minicalc import clamp


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_below():
    assert clamp(-3, 0, 10) == 0


def test_clamp_above():
    assert clamp(12, 0, 10) == 10


def test_clamp_edges():
    assert clamp(0, 0, 10) == 0 and clamp(10, 0, 10) == 10
"""

TESTS_STATS = """from minicalc import mean, windows


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_windows():
    assert windows([1, 2, 3, 4], 2) == [[1, 2], [2, 3], [3, 4]]


def test_windows_whole():
    assert windows([1, 2], 2) == [[1, 2]]
"""


def _project(root: Path, *, broken: bool = False) -> Path:
    (root / "minicalc").mkdir(parents=True)
    (root / "minicalc" / "__init__.py").write_text(MODULE + ("raise RuntimeError('broken build')\n" if broken else ""))
    (root / "tests").mkdir()
    (root / "tests" / "test_clamp.py").write_text(TESTS_CLAMP)
    (root / "tests" / "test_stats.py").write_text(TESTS_STATS)
    return root


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    require_sandbox("bwrap")
    base = tmp_path_factory.mktemp("repo-tasks")
    project = _project(base / "minicalc")
    out = base / "tasks"
    generation = make_repo_tasks(str(project), out, seed=3, max_tasks=3)
    return out, generation


def _task_dirs(out: Path) -> list[Path]:
    return sorted(path for path in out.iterdir() if (path / "task.toml").is_file())


def test_tasks_are_written_with_provenance_and_difficulty(generated: tuple[Path, Any]) -> None:
    out, generation = generated
    tasks = _task_dirs(out)
    assert len(tasks) == len(generation.bugs) == 3
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kept"] == 3 and sorted(manifest["tasks"]) == [path.name for path in tasks]
    assert manifest["package"] == "minicalc" and manifest["tried"] >= 3
    for task in tasks:
        metadata = tomllib.loads((task / "task.toml").read_text())["metadata"]
        grading = json.loads((task / "tests" / "grading.json").read_text())
        assert metadata["package"] == "minicalc" and metadata["module"] == "minicalc/__init__.py"
        assert metadata["tests_failing"] == len(grading["fail_to_pass"]) >= 1
        assert metadata["lines_touched"] >= 1 and isinstance(metadata["names_function"], bool)
        assert metadata["difficulty"] in ("easy", "medium", "hard")
        instruction = (task / "instruction.md").read_text()
        for test in grading["fail_to_pass"]:
            assert test in instruction  # the issue names the failing tests ...
        assert "solve" not in instruction and "fix.patch" not in instruction
        patch = (task / "solution" / "fix.patch").read_text()
        removed = [line[1:].strip() for line in patch.splitlines() if line.startswith("-") and line[1:].strip()]
        assert not any(line in instruction for line in removed if len(line) > 8)  # ... never the change
        for hidden in grading["hidden_files"]:
            assert not (task / "environment" / "repo" / hidden).exists()
            assert (task / "tests" / "trusted" / hidden).is_file()


def test_oracle_scores_one_and_null_zero(generated: tuple[Path, Any], tmp_path: Path, monkeypatch) -> None:
    out, _ = generated
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    oracle = rolloutgym.run(str(out), policy="oracle")
    null = rolloutgym.run(str(out), policy="null")
    for run, expected in ((oracle, 1.0), (null, 0.0)):
        assert all(not group.errors for group in run.groups)
        assert [group.trajectories[0].total_reward for group in run.groups] == [expected] * 3
    assert not list(tmp_path.iterdir()), "workspaces and verifier folders are removed"


def _bash(command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "name": "bash", "arguments": {"command": command}}],
    }


def _play(env: Any, commands: list[str]) -> tuple[float, list[str]]:
    env.reset()
    outputs = []
    try:
        for command in commands:
            observation, *_ = env.step(_bash(command))
            outputs.append(observation[0]["content"])
        _, reward, *_ = env.step({"role": "assistant", "content": "done"})
        return reward, outputs
    finally:
        env.close()


def test_the_agent_sees_no_hidden_tests_and_cannot_grade_itself(generated: tuple[Path, Any]) -> None:
    out, _ = generated
    task = _task_dirs(out)[0]
    grading = json.loads((task / "tests" / "grading.json").read_text())
    resolved = resolve_env(str(out))
    probe = "ls -a /app /app/tests 2>&1; ls /tests /solution 2>&1; grep -rl fail_to_pass /app /tmp 2>/dev/null"
    reward, (listing,) = _play(resolved.make_task(0), [probe])
    assert reward == 0.0
    assert "minicalc" in listing
    for hidden in grading["hidden_files"]:
        assert hidden.rsplit("/", 1)[-1] not in listing
    assert "grading.json" not in listing and "solve.sh" not in listing and "fix.patch" not in listing
    # Gaming the grader: tests rewritten to pass, a conftest.py that skips everything, a sitecustomize.
    fake_tests = (
        "mkdir -p tests && printf 'def test_ok():\\n    pass\\n' > tests/test_clamp.py && "
        "cp tests/test_clamp.py tests/test_stats.py"
    )
    skip_all = (
        "printf 'import pytest\\ncollect_ignore_glob = [\"*\"]\\n' > conftest.py && cp conftest.py tests/conftest.py"
    )
    site = "printf 'import os\\nos._exit(0)\\n' > sitecustomize.py"
    reward, _ = _play(resolved.make_task(0), [fake_tests, skip_all, site])
    assert reward == 0.0


def test_same_seed_same_tasks_and_bad_input_writes_nothing(generated: tuple[Path, Any], tmp_path: Path) -> None:
    out, generation = generated
    again = make_repo_tasks(str(_project(tmp_path / "minicalc")), tmp_path / "again", seed=3, max_tasks=1)
    assert again.bugs[0].digest == generation.bugs[0].digest
    assert _task_dirs(tmp_path / "again")[0].name == f"minicalc-{generation.bugs[0].digest[:8]}"
    assert (tmp_path / "again" / f"minicalc-{generation.bugs[0].digest[:8]}" / "instruction.md").read_text() == (
        out / f"minicalc-{generation.bugs[0].digest[:8]}" / "instruction.md"
    ).read_text()
    with pytest.raises(RepoTaskError, match="exists and is not empty"):
        make_repo_tasks(str(tmp_path / "minicalc"), out, max_tasks=1)
    no_tests = tmp_path / "notests"
    (no_tests / "pkg").mkdir(parents=True)
    (no_tests / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    with pytest.raises(RepoTaskError, match="no test files"):
        make_repo_tasks(str(no_tests), tmp_path / "none", max_tasks=1)
    broken = _project(tmp_path / "broken", broken=True)
    with pytest.raises(RepoTaskError, match="before any change"):
        make_repo_tasks(str(broken), tmp_path / "broken-out", max_tasks=1)
    assert not (tmp_path / "none").exists() and not (tmp_path / "broken-out").exists()
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".")], "no staging folder is left"


def test_the_cli_gives_a_one_line_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from rolloutgym.cli import main

    assert main(["tasks", "make-repo", "not a name!", "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err
    assert "give a package name (NAME or NAME==VERSION) or a local folder" in error
    assert "Traceback" not in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_the_shipped_family_is_split_by_package_licensed_and_never_shows_the_fix() -> None:
    from rolloutgym_code.repotasks.family import catalogue, repo_bug_tasks

    entries = catalogue()
    tasks = repo_bug_tasks()
    assert len(entries) >= 8 and len(tasks) == sum(entry["tasks"] for entry in entries) >= 200
    split_of = {entry["name"]: entry["split"] for entry in entries}
    assert {"train", "dev", "test"} <= set(split_of.values())
    for entry in entries:
        assert entry["license"] not in ("", "unknown") and entry["kind"]
    for task in tasks:
        folder = Path(task.folder)
        assert task.split == split_of[task.metadata["package"]] == task.metadata["split"]
        instruction = (folder / "instruction.md").read_text()
        patch = (folder / "solution" / "fix.patch").read_text()
        changed = [line[1:].strip() for line in patch.splitlines()[2:] if line[:1] in "+-"]
        changed = [line for line in changed if len(line) > 12]  # a line of code, not a word like "pass"
        assert not any(line in instruction for line in changed), task.id
        grading = json.loads((folder / "tests" / "grading.json").read_text())
        assert set(grading["fail_to_pass"]) <= set(grading["expected"])
        assert not any((folder / "environment" / "repo" / path).exists() for path in grading["hidden_files"])
