"""``hatch run test`` (scripts/run_tests.py) leaves no process behind, whatever ends it, and a pytest
killed before its summary still names what failed (issue 40: a crash lost the failure summary and left a
platform server and two workers running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")

# A "test run" that starts a server the way a careless test does: a grandchild in its own session whose
# parent exits at once (so it is nobody's child), plus a plain child; then it ends without stopping them.
CARELESS = textwrap.dedent(
    """
    import os, subprocess, sys, time
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    subprocess.Popen(sleeper)
    launcher = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys; subprocess.Popen(sys.argv[1:], start_new_session=True)",
         *sleeper]
    )
    launcher.wait()
    time.sleep(0.5)
    """
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_processes_a_run_leaves_behind_are_stopped_and_named(tmp_path: Path) -> None:
    probe = textwrap.dedent(
        f"""
        import json, subprocess, sys
        sys.path.insert(0, {str(ROOT / "scripts")!r})
        import run_tests
        assert run_tests.adopt_orphans()
        subprocess.run([sys.executable, "-c", {CARELESS!r}], check=True)
        left = run_tests._children()
        stopped = run_tests.stop_leftovers()
        print(json.dumps({{"left": sorted(left), "stopped": stopped, "after": sorted(run_tests._children())}}))
        """
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    import json

    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(seen["left"]) == 2, seen  # the plain child and the orphaned grandchild, both re-parented here
    assert len(seen["stopped"]) == 2 and all("time.sleep(600)" in command for command in seen["stopped"]), seen
    assert seen["after"] == [] and not any(_alive(pid) for pid in seen["left"])


def test_a_killed_pytest_still_names_its_failures(tmp_path: Path) -> None:
    """run_tests.py on a folder whose first test fails and whose second hangs: SIGTERM ends the run, the
    failure recorded before it is printed, and the hanging test's helper process is gone."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_a.py").write_text(
        textwrap.dedent(
            """
            import subprocess, sys, time

            def test_fails():
                assert 1 == 2, "the failure that must be named"

            def test_hangs():
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
                time.sleep(600)
            """
        )
    )
    env = {**os.environ, "ROLLOUTGYM_TEST_WORKERS": "0", "TMPDIR": str(tmp_path)}
    command = [sys.executable, str(ROOT / "scripts" / "run_tests.py"), str(suite), "--rootdir", str(suite)]
    process = subprocess.Popen(
        [*command, "-o", "addopts=", "-q"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    marker = "the failure that must be named"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not _recorded_failure(tmp_path):
        time.sleep(0.2)
    time.sleep(1.0)  # test_hangs is running (it starts right after)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert f"FAILED test_a.py::test_fails (call) AssertionError: {marker}" in err, (out[-2000:], err[-2000:])
    assert "stopped 1 process(es) the tests left running" in err, err[-2000:]


def _recorded_failure(folder: Path) -> bool:
    return any("test_fails" in path.read_text() for path in folder.glob("rolloutgym-test-failures-*.txt"))
