"""The SDK's ``code-editing`` template run locally: an env file with hidden tests executes them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

ENV_FILE = textwrap.dedent(
    """
    from rolloutgym.declarative import Environment, Task

    env = Environment(
        slug="fix-add",
        name="Fix add",
        template="code-editing",
        config={
            "files": {
                "calc.py": "def add(a, b):\\n    return a - b\\n",
                "tests/test_calc.py": "from calc import add\\n\\ndef test_zero():\\n    assert add(0, 0) == 0\\n",
            },
            "limits": {"wall_seconds": 20},
        },
        tasks=[
            Task(
                instruction="add() in calc.py subtracts. Make it add.",
                hidden_ground_truth={
                    "tests": {
                        "tests/test_hidden_calc.py": "from calc import add\\n\\ndef test_add():\\n"
                        "    assert add(2, 3) == 5\\n\\ndef test_negative():\\n    assert add(-2, 1) == -1\\n"
                    },
                    "solution": {"calc.py": "def add(a, b):\\n    return b + a\\n"},
                },
                split="train",
            ),
            Task(
                instruction="Rename add to plus in calc.py and delete tests/test_calc.py.",
                hidden_ground_truth={
                    "files": {"calc.py": "def plus(a, b):\\n    return a - b\\n", "tests/test_calc.py": None}
                },
                split="test",
            ),
        ],
    )
    """
)


@pytest.fixture
def env_file(tmp_path):
    path = tmp_path / "my_code_env.py"
    path.write_text(ENV_FILE)
    return path


def _rewards(run_path):
    from rolloutgym.runs import read_run

    run = read_run(run_path)
    return [trajectory.score.value for group in run.groups for trajectory in group.trajectories]


@pytest.mark.sandbox
@pytest.mark.parametrize("policy, expected", [("oracle", 1.0), ("null", 0.0)])
def test_env_file_runs_with_real_tests_from_the_cli(sandbox, env_file, tmp_path, policy, expected):
    out = tmp_path / f"{policy}.jsonl"
    completed = subprocess.run(
        [sys.executable, "-m", "rolloutgym", "run", str(env_file), "--policy", policy, "--out", str(out), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert _rewards(out) == [expected, expected]


@pytest.mark.sandbox
def test_env_file_hidden_tests_really_run(sandbox, env_file):
    from rolloutgym.declarative import resolve_env_file

    resolved = resolve_env_file(env_file)
    environment = resolved.make(resolved.tasks[0])
    try:
        environment.reset()
        action = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "1",
                    "name": "write_file",
                    "arguments": {"path": "calc.py", "content": "def add(a, b):\n    return 5\n"},
                }
            ],
        }
        environment.step(action)
        _, reward, terminated, _, info = environment.step({"role": "assistant", "content": "done"})
        assert terminated and reward == 0.0
        assert "test_negative" in info["score"]["feedback"]  # add(2, 3) == 5 passes, the other does not
        assert info["score"]["components"]["hidden_tests"]["value"] == 0.5
    finally:
        environment.close()


@pytest.mark.parametrize(
    "config, ground_truth, message",
    [
        ({"files": {"/etc/passwd": "x"}}, {}, "config.files\\['/etc/passwd'\\]: absolute paths are not allowed"),
        ({"files": {"a.py": 3}}, {}, "config.files\\['a.py'\\] must be a string"),
        ({"files": {}, "sandbox_image": "x"}, {}, "unknown keys \\['sandbox_image'\\]"),
        ({"files": {"a.py": ""}}, {"hidden": {}}, "unknown hidden_ground_truth keys \\['hidden'\\]"),
        ({"files": {"a.py": ""}}, {"tests": {"a.py": "x"}}, "same paths as visible files"),
        ({"files": {"a.py": ""}, "limits": {"wall": 3}}, {}, "config.limits"),
    ],
)
def test_malformed_env_files_name_the_problem(config, ground_truth, message):
    from rolloutgym_code.template import compile_code_editing
    from rolloutgym_protocol.errors import EnvFileError

    # The compiler is duck-typed (it does not rely on the core's own shape validation).
    task = SimpleNamespace(instruction="x", hidden_ground_truth=ground_truth, id=None, split="dev", input=None)
    environment = SimpleNamespace(slug="bad", name="Bad", config=config, tasks=[task], description=None, verifier=None)
    with pytest.raises(EnvFileError, match=message):
        compile_code_editing(environment)
