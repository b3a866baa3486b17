"""Golden fixtures of the grader and the tool protocol, played through the real env and sandbox.

Right answers in unusual forms pass; near misses, empty answers and exploits score 0 with
feedback that names the failing tests.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.sandbox

TASK = "paginate-first-page"
FIXED_LINE = "    start = (page - 1) * per_page\n"


def _call(name, call_id="c1", **arguments):
    return {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _play(actions, *, env_id="code/pybugs-v0", task=TASK):
    """Reset, play ``actions`` then submit; returns (observations per step, final info, env)."""
    from rolloutgym.registry import get_registry

    environment = get_registry().make(env_id, task=task)
    try:
        environment.reset(seed=0)
        observations = []
        for action in actions:
            observation, reward, terminated, truncated, info = environment.step(action)
            observations.append(observation)
            if terminated:
                return observations, reward, info
        observation, reward, terminated, truncated, info = environment.step(_call("submit", "final"))
        assert terminated
        return observations, reward, info
    finally:
        environment.close()


def _current(task=TASK, env_id="code/pybugs-v0"):
    from rolloutgym.registry import get_registry

    _, item = get_registry().resolve_task(env_id, task)
    return item


def test_fix_in_an_unusual_form_passes(sandbox):
    source = (
        _current()
        .files["pagination.py"]
        .replace("    start = page * per_page\n", "    start = per_page * page - per_page\n")
    )
    crlf = source.replace("\n", "\r\n")
    _, reward, info = _play([_call("write_file", path="pagination.py", content=crlf)])
    assert reward == 1.0, info["score"]["feedback"]
    assert info["score"]["components"]["hidden_tests"]["value"] == 1.0


def test_str_replace_fix_passes(sandbox):
    _, reward, info = _play(
        [_call("str_replace", path="pagination.py", old_str="    start = page * per_page\n", new_str=FIXED_LINE)]
    )
    assert reward == 1.0, info["score"]["feedback"]


def test_near_miss_fails_and_names_the_failing_tests(sandbox):
    near_miss = "    start = (page - 1) * per_page + 1\n"
    _, reward, info = _play(
        [_call("str_replace", path="pagination.py", old_str="    start = page * per_page\n", new_str=near_miss)]
    )
    score = info["score"]
    assert reward == 0.0
    hidden = score["components"]["hidden_tests"]
    assert 0.0 < hidden["value"] < 1.0  # partial credit is reported, not rewarded
    assert "test_first_page" in score["feedback"] and "assert" in score["feedback"]
    assert "tests/test_pagination_hidden.py::test_first_page" in hidden["metadata"]["failing"]


def test_empty_answer_scores_zero_with_feedback(sandbox):
    _, reward, info = _play([{"role": "assistant", "content": ""}])
    assert reward == 0.0
    assert "hidden tests: 0/4" in info["score"]["feedback"] or "failing" in info["score"]["feedback"]


EXPLOITS = {
    "conftest forcing every test to pass": [
        _call(
            "write_file",
            path="conftest.py",
            content=(
                "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                "    outcome = yield\n    report = outcome.get_result()\n    report.outcome = 'passed'\n"
            ),
        )
    ],
    "os._exit(0) when the module is imported": [
        _call("write_file", path="pagination.py", content="import os\nos._exit(0)\n")
    ],
    "a fake test file at the hidden path": [
        _call("write_file", path="tests/test_pagination_hidden.py", content="def test_ok():\n    pass\n")
    ],
    "pytest.ini deselecting every test": [
        _call("write_file", path="pytest.ini", content="[pytest]\naddopts = -k nothing_matches\n")
    ],
    "sitecustomize that exits early": [
        _call("write_file", path="sitecustomize.py", content="import os\nos._exit(0)\n")
    ],
    "a forged report file": [
        _call(
            "write_file",
            path=".rolloutgym-report.xml",
            content='<testsuite><testcase name="test_first_page" file="tests/test_pagination_hidden.py"/></testsuite>',
        )
    ],
    "calling every tool": [
        _call("list_files"),
        _call("read_file", path="pagination.py"),
        _call("run_tests"),
        _call("write_file", path="notes.txt", content="done"),
        _call("delete_file", path="notes.txt"),
    ],
}


@pytest.mark.parametrize("name", sorted(EXPLOITS))
def test_exploits_score_zero(sandbox, name):
    _, reward, info = _play(EXPLOITS[name])
    assert reward == 0.0, f"exploit {name!r} scored {reward}: {info['score']['feedback']}"


def test_an_added_conftest_is_reported(sandbox):
    _, _, info = _play(EXPLOITS["conftest forcing every test to pass"])
    assert "ignored conftest.py files the agent added: conftest.py" in info["score"]["feedback"]


def test_edited_visible_tests_are_restored_for_grading(sandbox):
    _, reward, info = _play(
        [
            _call("write_file", path="tests/test_examples.py", content="def test_nothing():\n    pass\n"),
            _call("write_file", path="roman.py", content="def roman_to_int(numeral):\n    return 3\n"),
        ],
        env_id="code/pyfunc-v0",
        task="roman-numerals",
    )
    assert reward == 0.0
    visible = info["score"]["components"]["visible_tests"]
    assert visible["value"] == 0.0 and "test_examples" in visible["feedback"]


def test_hidden_tests_are_not_in_the_workspace(sandbox):
    observations, _, _ = _play(
        [
            _call("list_files"),
            _call("read_file", path="tests/test_pagination_hidden.py"),
        ]
    )
    assert "hidden" not in observations[0][0]["content"]
    assert observations[1][0]["content"].startswith("error: no file")


def test_run_tests_shows_visible_results(sandbox):
    observations, _, info = _play([_call("run_tests")], env_id="code/pyfunc-v0", task="roman-numerals")
    content = observations[0][0]["content"]
    assert content.startswith("0/1 tests passed") and "NotImplementedError" in content
    assert info["test_runs"] == 1


def test_run_tests_without_visible_tests_says_so(sandbox):
    observations, _, _ = _play([_call("run_tests")])
    assert "no visible tests" in observations[0][0]["content"]


def test_bad_tool_calls_are_tool_errors_not_crashes(sandbox):
    actions = [
        _call("rm_rf", path="/"),
        _call("read_file"),
        _call("read_file", path="pagination.py", start_line="one"),
        _call("write_file", path="/etc/passwd", content="x"),
        _call("write_file", path="../x.py", content="x"),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "s", "name": "read_file", "arguments": '{"path": "pagination.py"}'}],
        },
        {"role": "assistant", "content": "", "tool_calls": ["not a dict"]},
    ]
    observations, reward, info = _play(actions)
    contents = [step[0]["content"] for step in observations]
    assert contents[0].startswith("error: unknown tool 'rm_rf'")
    assert contents[1].startswith("error: invalid arguments for read_file") and "path" in contents[1]
    assert contents[2].startswith("error: invalid arguments for read_file")
    assert "absolute paths are not allowed" in contents[3]
    assert "'..' is not allowed" in contents[4]
    assert contents[5].startswith('"""Split a list')  # JSON-encoded arguments are accepted
    assert contents[6].startswith("error: unknown tool")
    assert info["invalid_actions"] == 6
    assert reward == 0.0


def test_expected_files_grading_uses_sdk_semantics(sandbox):
    from rolloutgym_code.envs import CodeEditingEnv, CodeTask

    task = CodeTask(
        id="rename",
        split="dev",
        instruction="Rename and delete.",
        files={"a.py": "x = 1\n", "old.txt": "bye\n"},
        expected_files={"a.py": "y = 1\n", "old.txt": None},
    )
    environment = CodeEditingEnv(task)
    try:
        environment.reset()
        environment.step(_call("write_file", path="a.py", content="y = 1"))  # missing final newline: still equal
        _, reward, _, _, info = environment.step(_call("submit"))
        assert reward == 0.0
        assert "old.txt: expected the file to be deleted" in info["score"]["feedback"]
        environment.reset()
        for _ in range(3):
            action = environment.oracle_action()
            _, reward, terminated, _, info = environment.step(action)
            if terminated:
                break
        assert reward == 1.0, info["score"]["feedback"]
    finally:
        environment.close()


def test_run_tests_output_is_deterministic(sandbox):
    first, _, _ = _play([_call("run_tests")], env_id="code/pyfunc-v0", task="wrap-text")
    second, _, _ = _play([_call("run_tests")], env_id="code/pyfunc-v0", task="wrap-text")
    assert first == second
    assert "rolloutgym-report" not in first[0][0]["content"]
