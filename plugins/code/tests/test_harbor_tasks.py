"""Harbor task directories as an env: ``rolloutgym run path/to/tasks/`` (issue 27).

The tests make a Harbor-format task set (instruction.md, task.toml, environment/, tests/,
solution/) in their own folder and check: the oracle (solution/solve.sh) scores 1 on every
task, doing nothing scores 0, and an agent acting through the sandbox shell cannot score by
writing Harbor's reward file or by reading/applying solution/ (it is not in its sandbox), nor
by leaving a process behind to write the reward file while the tests run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import rolloutgym
from rolloutgym.sources import resolve_env
from rolloutgym_code.testing import require_sandbox
from rolloutgym_protocol.errors import EnvFileError

pytestmark = pytest.mark.usefixtures("bwrap")


@pytest.fixture
def bwrap():
    require_sandbox("bwrap")


CALC_TEST = """#!/bin/bash
cd /app
if python3 -c "import calc; assert calc.add(2, 3) == 5 and calc.add(-1, 1) == 0"; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""

GREETING_TEST = """#!/bin/bash
if [ "$(cat /srv/work/greeting.txt 2>/dev/null)" = "$EXPECTED" ]; then
  printf '{"reward": 1.0, "exact": 1.0}' > /logs/verifier/reward.json
else
  printf '{"reward": 0.0, "exact": 0.0}' > /logs/verifier/reward.json
fi
"""

SORT_TEST = """#!/bin/bash
# Writes nothing unless the output is right: a missing reward file scores 0.
cd /app
python3 -c "
import subprocess
out = subprocess.run(['python3', 'sortnums.py'], input='3\\n1\\n2\\n', capture_output=True, text=True).stdout
assert out.split() == ['1', '2', '3'], out
" && echo 1 > /logs/verifier/reward.txt
"""


def _task(root: Path, name: str, files: dict[str, str]) -> Path:
    folder = root / name
    for relative, content in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return folder


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    root = tmp_path / "tasks"
    _task(
        root,
        "fix-add",
        {
            "instruction.md": "add() in /app/calc.py subtracts. Make it add.\n",
            "task.toml": '[metadata]\ndifficulty = "easy"\n[verifier]\ntimeout_sec = 30\n[agent]\ntimeout_sec = 60\n',
            "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY src/ /app/\nRUN pip install x\n",
            "environment/src/calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test.sh": CALC_TEST,
            "solution/solve.sh": "#!/bin/bash\nsed -i 's/a - b/a + b/' /app/calc.py\n",
        },
    )
    _task(
        root,
        "greeting",
        {
            "instruction.md": "Write the greeting into greeting.txt.\n",
            "task.toml": (
                '[environment]\nworkdir = "/srv/work"\n[verifier]\ntimeout_sec = 30\n'
                '[verifier.env]\nEXPECTED = "hello harbor"\n[solution.env]\nGREETING = "hello harbor"\n'
            ),
            "tests/test.sh": GREETING_TEST,
            "solution/solve.sh": '#!/bin/bash\nprintf "%s" "$GREETING" > greeting.txt\n',
        },
    )
    _task(
        root,
        "sort-numbers",
        {
            "instruction.md": "Write /app/sortnums.py: read integers from stdin, print them sorted.\n",
            "task.toml": '[task]\nname = "sort-numbers"\n',
            "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n",
            "tests/test.sh": SORT_TEST,
            "solution/solve.sh": (
                "#!/bin/bash\ncat > /app/sortnums.py <<'EOF'\nimport sys\n"
                "print('\\n'.join(str(n) for n in sorted(int(x) for x in sys.stdin.read().split())))\nEOF\n"
            ),
        },
    )
    return root


def _rewards(run: Any) -> dict[str, float]:
    assert all(not group.errors for group in run.groups)
    return {group.item_id: group.trajectories[0].total_reward for group in run.groups}


def test_oracle_scores_one_and_null_zero_on_every_task(
    tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    oracle = rolloutgym.run(str(tasks), policy="oracle")
    assert _rewards(oracle) == {"fix-add": 1.0, "greeting": 1.0, "sort-numbers": 1.0}
    null = rolloutgym.run(str(tasks), policy="null")
    assert _rewards(null) == {"fix-add": 0.0, "greeting": 0.0, "sort-numbers": 0.0}
    last = null.groups[0].trajectories[0].steps[-1].info["score"]
    assert last["feedback"] == "the task's tests gave reward 0.0"
    assert any("Dockerfile (not built" in note for note in last["metadata"]["ignored"])
    assert not list(scratch.iterdir()), "the episodes' workspaces and verifier folders are removed"


def test_a_folder_resolves_through_the_template_hook(tasks: Path) -> None:
    resolved = resolve_env(str(tasks))
    assert resolved.env_id == "file/tasks-v0" and resolved.origin == f"file:{tasks}"
    assert resolved.task_ids == ["fix-add", "greeting", "sort-numbers"]
    one = resolve_env(str(tasks / "greeting"))  # one task folder is a set of one
    assert one.task_ids == ["greeting"]
    env = resolved.make_task(0)
    try:
        observation, _ = env.reset()
        assert "subtracts" in observation[-1]["content"]
        listing, *_ = env.step(_bash("ls -a; cat calc.py"))
        assert "calc.py" in listing[0]["content"] and "a - b" in listing[0]["content"]
        assert "Dockerfile" not in listing[0]["content"]
    finally:
        env.close()


def _bash(command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "name": "bash", "arguments": {"command": command}}],
    }


class ScriptedAgent:
    """Plays shell commands through the env's bash tool, then submits; keeps what it saw."""

    def __init__(self, commands: list[str]) -> None:
        self.commands = commands
        self.seen: list[str] = []

    def play(self, env: Any) -> float:
        env.reset()
        reward = 0.0
        for command in self.commands:
            observation, reward, terminated, _, _ = env.step(_bash(command))
            self.seen.append(observation[0]["content"])
            assert not terminated
        _, reward, terminated, _, info = env.step({"role": "assistant", "content": "done"})
        assert terminated
        self.info = info
        return reward


def _hacks(task_dir: str) -> list[str]:
    return [
        # Harbor's reward file, written from the agent's shell
        "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt; echo rc=$?",
        "echo 1 > reward.txt; echo '{\"reward\": 1}' > reward.json; "
        "mkdir -p logs/verifier; echo 1 > logs/verifier/reward.txt",
        "cat /logs/verifier/reward.txt; echo rc=$?",  # nothing of an earlier call's root is left
        # the oracle patch: /solution, the host path of the task folder, a search of the whole filesystem
        "bash /solution/solve.sh; echo rc=$?",
        f"ls {task_dir}/solution; bash {task_dir}/solution/solve.sh; echo rc=$?",
        "find / -name solve.sh -o -name test.sh 2>/dev/null | head; ls /tests; echo listed",
        "for f in $(find / -name solve.sh 2>/dev/null); do bash $f; done; echo searched",
        # a process left behind to write the reward file while the tests run
        "(for i in $(seq 1 100); do mkdir -p /logs/verifier 2>/dev/null; "
        "echo 1 > /logs/verifier/reward.txt 2>/dev/null; sleep 0.05; done) > /dev/null 2>&1 & echo started",
        # a symlink in the workspace to where the reward file will be
        "ln -s /logs/verifier/reward.txt planted; ln -s /tests tests_link; echo linked",
    ]


@pytest.mark.parametrize("task_index", [0, 1, 2])
def test_reward_file_and_oracle_patch_hacks_score_zero(tasks: Path, task_index: int) -> None:
    resolved = resolve_env(str(tasks))
    task_dir = str(tasks / resolved.task_ids[task_index])
    env = resolved.make_task(task_index)
    agent = ScriptedAgent(_hacks(task_dir))
    try:
        assert agent.play(env) == 0.0
    finally:
        env.close()
    seen = "\n".join(agent.seen)
    assert "No such file" in agent.seen[2] and "rc=1" in agent.seen[2]
    assert "No such file" in agent.seen[3] and "No such file" in agent.seen[4]
    assert "sed -i" not in seen and "EOF" not in seen and "EXPECTED" not in seen  # no solve.sh or test.sh read
    assert "/logs/verifier" not in json.dumps(agent.info["score"]["components"])


def test_the_same_commands_in_the_solution_folder_would_solve_it(tasks: Path) -> None:
    """The hack test is real: running solution/solve.sh's text through the same shell tool scores 1."""
    resolved = resolve_env(str(tasks))
    env = resolved.make_task(0)
    try:
        agent = ScriptedAgent([(tasks / "fix-add" / "solution" / "solve.sh").read_text()])
        assert agent.play(env) == 1.0
    finally:
        env.close()


def test_a_malformed_task_toml_is_a_one_line_error_with_file_and_line(tasks: Path) -> None:
    bad = tasks / "greeting" / "task.toml"
    bad.write_text('[environment]\nworkdir = "/srv/work"\n[verifier\ntimeout_sec = 30\n')
    with pytest.raises(EnvFileError) as caught:
        resolve_env(str(tasks))
    message = str(caught.value)
    assert message.startswith(f"{bad}:3: not valid TOML") and "\n" not in message
    done = subprocess.run(
        [sys.executable, "-m", "rolloutgym", "run", str(tasks), "--policy", "null"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and f"{bad}:3:" in lines[0], lines


def test_bad_task_settings_name_the_setting(tasks: Path) -> None:
    config = tasks / "fix-add" / "task.toml"
    config.write_text("[verifier]\ntimeout_sec = 'soon'\n")
    with pytest.raises(EnvFileError, match=r"task.toml: \[verifier\] timeout_sec must be a positive number"):
        resolve_env(str(tasks))
    config.write_text('[environment]\nworkdir = "/usr/app"\n')
    with pytest.raises(EnvFileError, match="lies under /usr"):
        resolve_env(str(tasks))
    config.write_text("[[steps]]\nname = 'one'\n")
    with pytest.raises(EnvFileError, match=r"multi-step tasks \(\[\[steps\]\]\) are not supported"):
        resolve_env(str(tasks))
    config.write_text("")
    (tasks / "fix-add" / "instruction.md").write_text("  \n")
    with pytest.raises(EnvFileError, match=r"fix-add/instruction\.md: empty"):
        resolve_env(str(tasks))


def test_a_folder_no_template_reads_says_what_it_needs(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.md").write_text("hi")
    with pytest.raises(EnvFileError, match=r"no installed template reads.*task\.toml \(harbor\)"):
        resolve_env(str(tmp_path / "notes"))


class _NoModel:
    """A message-level model the harness below never calls."""

    name = "no-model"

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the harness made no model call")


def test_a_command_harness_cannot_apply_the_solution_or_write_the_reward(tasks: Path) -> None:
    """harness:command runs on the host, unsandboxed: it can read solution/ there (the docs say so),
    but it is not given the sandbox's workspace, and its answer ends the episode: it scores 0."""
    harness = pytest.importorskip("rolloutgym_harness.harness")
    solve = tasks / "fix-add" / "solution" / "solve.sh"
    command = f"cat {solve}; mkdir -p logs/verifier; echo 1 > logs/verifier/reward.txt; echo 1 > reward.txt; pwd"
    policy = harness.CommandHarness(command, model=_NoModel(), wall_limit=30)
    env = resolve_env(str(tasks)).make_task(0)
    try:
        trajectory = rolloutgym.rollout(env, policy)
    finally:
        env.close()
    assert "sed -i" in trajectory.steps[-1].action["content"]  # it did read the solution on the host
    assert trajectory.total_reward == 0.0 and len(trajectory.steps) == 1
    assert trajectory.steps[-1].info["score"]["feedback"] == "the task's tests gave reward 0.0"


def test_a_workspace_past_its_limit_ends_the_episode_with_zero(tasks: Path) -> None:
    from rolloutgym.sources import EnvSource

    resolved = resolve_env(EnvSource(str(tasks), {"workspace_mib": 2}))
    env = resolved.make_task(0)
    try:
        env.reset()
        _, reward, terminated, _, info = env.step(_bash("head -c 1500000 /dev/zero > a; echo one"))
        assert not terminated
        _, reward, terminated, _, info = env.step(_bash("head -c 1500000 /dev/zero > b; echo two"))
        assert terminated and reward == 0.0 and info["score"]["feedback"] == "the workspace grew past 2 MiB"
        assert env.sandbox is None  # its files are deleted at once
    finally:
        env.close()


def test_a_task_folder_under_a_bound_directory_is_hidden(tasks: Path) -> None:
    """A task set installed under /usr (bound read-only into every sandbox) is covered by an empty tmpfs."""
    from rolloutgym_code._harbor_sandbox import EpisodeSandbox

    shared = "/usr/share"
    if not any(Path(shared).iterdir()):
        pytest.skip("/usr/share is empty here")
    sandbox = EpisodeSandbox(hide=[shared, str(tasks)])
    try:
        result = sandbox.shell(f"ls -A {shared} | wc -l; ls {tasks} 2>&1; echo end")
    finally:
        sandbox.close()
    assert result.output.split("\n")[0].strip() == "0" and "No such file" in result.output
