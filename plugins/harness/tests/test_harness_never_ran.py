"""A harness that never ran (not found, a missing script, an exit or a signal before any model call)
is a recorded error of the run, never a reward of 0; a harness that made calls and then failed keeps
its score (stop reason ``harness_error``). The how-to's ``python my_agent.py`` runs: a relative
script path resolves against the folder ``rolloutgym run`` was started in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from rolloutgym.cli import main
from rolloutgym_harness._command import resolve_relative

AGENT = """
import sys, openai
client = openai.OpenAI(max_retries=0)
client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=3)
print("64")
raise SystemExit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""


def _run(tmp_path: Path, command: str) -> tuple[dict, str]:
    out = tmp_path / "run.jsonl"
    args = ["run", "toy/arith-v0", "--policy", "harness:command", "--policy-arg", f"command={command}"]
    main([*args, "--policy-arg", "model=hf:tiny", "--limit", "1", "--out", str(out)])
    (group,) = [json.loads(line) for line in out.read_text().splitlines() if '"kind":"group"' in line]
    return group, str(out)


PY = sys.executable
NEVER_RAN = [
    ("no-such-agent-40 {instruction_file}", "code 127.*not found"),
    (f"{PY} -c 'raise SystemExit(3)'", "code 3 before making any model call"),
    (f"{PY} -c 'import no_such_module_40'", "ModuleNotFoundError"),
    (f"{PY} -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'", "killed by signal 9"),
    (f"{PY} missing_agent.py {{instruction_file}}", "resolved against the folder `rolloutgym run` was started in"),
    (f"{PY} scripts/missing.py", "check the path, or make it absolute"),
]


@pytest.mark.parametrize(("command", "said"), NEVER_RAN)
def test_a_harness_that_never_ran_is_an_error_not_a_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    group, out = _run(tmp_path, command)
    assert group["trajectories"] == [] and len(group["errors"]) == 1
    message = json.dumps(group["errors"][0])
    assert "harness command" in message and "before making any model call" in message
    assert __import__("re").search(said, message), message
    capsys.readouterr()
    main(["show", out])
    shown = capsys.readouterr().out
    assert "errors by type: PolicyError × 1" in shown and "no scored episode" in shown, shown


def test_how_to_relative_script_runs_from_the_callers_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_agent.py").write_text(AGENT)
    monkeypatch.chdir(tmp_path)
    group, _ = _run(tmp_path, f"{PY} my_agent.py")
    (trajectory,) = group["trajectories"]
    record = trajectory["steps"][0]["policy_info"]["harness"]
    assert record["stop_reason"] == "done" and len(record["calls"]) == 1
    assert str((tmp_path / "my_agent.py").resolve()) in record["command"]


def test_a_harness_that_made_calls_then_failed_keeps_its_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    monkeypatch.chdir(tmp_path)
    group, _ = _run(tmp_path, f"{PY} ./agent.py 5")
    assert group["errors"] == []
    (trajectory,) = group["trajectories"]
    step = trajectory["steps"][0]
    assert step["policy_info"]["harness"]["stop_reason"] == "harness_error"
    assert step["policy_info"]["harness"]["returncode"] == 5 and step["action"] == "64"
    assert group["scores"][0]["value"] == 1.0  # 64 is toy/arith-v0's task 0 answer: the answer still scores


def test_resolve_relative_rewrites_only_files_of_the_callers_folder(tmp_path: Path) -> None:
    origin, workdir = tmp_path / "origin", tmp_path / "work"
    (origin / "sub").mkdir(parents=True)
    workdir.mkdir()
    for name in ("a.py", "sub/b.sh", "python", "shared.py"):
        (origin / name).write_text("")
    (workdir / "shared.py").write_text("")
    a, b = (str((origin / name).resolve()) for name in ("a.py", "sub/b.sh"))
    cases = {
        "python a.py {instruction_file}": f"python {a} {{instruction_file}}",
        "sub/b.sh --x 1": f"{b} --x 1",
        "cd /tmp && python  a.py": f"cd /tmp && python  {a}",
        "python shared.py": "python shared.py",  # the work folder has its own
        "python missing.py": "python missing.py",
        "python -m a.py": "python -m " + a,
        "'a.py' \"a.py\" $HOME/a.py a.py>log": "'a.py' \"a.py\" $HOME/a.py a.py>log",
        "python /abs/a.py": "python /abs/a.py",
    }
    for command, expected in cases.items():
        assert resolve_relative(command, str(origin), str(workdir)) == expected, command
