"""``rolloutgym check`` on what a user brings: an env file and a folder of Harbor tasks (issue 44's 'done when')."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rolloutgym.checks import check
from rolloutgym.cli import main

ROOT = Path(__file__).resolve().parents[1]
CALC_TEST = """#!/bin/bash
cd /app
if python3 -c "import calc; assert calc.add(2, 3) == 5 and calc.add(-1, 1) == 0"; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def test_an_env_file_gets_its_card_from_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("rolloutgym_workflow")
    assert main(["check", str(ROOT / "examples" / "refund_agent.py"), "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    statuses = {result["name"]: result["status"] for result in card["results"]}
    assert card["env_id"] == "file/refund-agent-v0" and card["ok"] is True
    assert statuses["ceiling"] == statuses["floor"] == statuses["probe:call-every-tool"] == "pass"


def _harbor_task(root: Path, dockerfile: str) -> Path:
    files = {
        "instruction.md": "add() in /app/calc.py subtracts. Make it add.\n",
        "task.toml": "[verifier]\ntimeout_sec = 30\n[agent]\ntimeout_sec = 60\n",
        "environment/Dockerfile": dockerfile,
        "environment/src/calc.py": "def add(a, b):\n    return a - b\n",
        "environment/solution/solve.sh": "#!/bin/bash\nsed -i 's/a - b/a + b/' /app/calc.py\n",
        "tests/test.sh": CALC_TEST,
        "solution/solve.sh": "#!/bin/bash\nsed -i 's/a - b/a + b/' /app/calc.py\n",
    }
    for relative, content in files.items():
        path = root / "fix-add" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


def test_a_harbor_folder_passes_and_one_that_ships_its_solution_to_the_agent_fails(tmp_path: Path) -> None:
    pytest.importorskip("rolloutgym_code")
    clean = _harbor_task(tmp_path / "clean", "FROM python:3.12-slim\nWORKDIR /app\nCOPY src/ /app/\n")
    report = check(str(clean), sample=None)
    assert report.ok, [(result.name, result.findings) for result in report.failures]
    ran = {result.name for result in report.results if result.status == "pass"}
    assert {"ceiling", "floor", "probe:reward-file", "probe:test-edit", "probe:hidden-read", "containment"} <= ran
    assert report.result("lint:folder").status == "warn"  # no USER: the agent runs as root
    leaky = _harbor_task(
        tmp_path / "leaky", "FROM python:3.12-slim\nWORKDIR /app\nCOPY src/ /app/\nCOPY solution/ /app/solution/\n"
    )
    report = check(str(leaky), sample=None, checks=["lint", "probe"], probes=["hidden-read"])
    assert report.result("lint:folder").status == "fail"
    assert report.result("probe:hidden-read").status == "fail", report.result("probe:hidden-read")
