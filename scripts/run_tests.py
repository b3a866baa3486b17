"""Run the whole test suite (every package's tests/ and the top-level tests/).

Exits non-zero when pytest collects no test at all (pytest's exit code 5), so an empty
run never passes silently. Extra arguments go to pytest.

Tests run in parallel worker processes (pytest-xdist): one per CPU, at most four, or
``ROLLOUTGYM_TEST_WORKERS`` (``0`` runs them in this process). Passing ``-n``/``--numprocesses``
yourself overrides both. The 30 slowest tests are listed at the end (``--durations``), so CI's
log shows where its time goes.

No process outlives the run, whatever ends it (a pass, a failure, Ctrl-C, SIGTERM, a crash of pytest): on Linux
this script is the subreaper of everything the tests start, and stops and names what is still running at the end.
Each failure is recorded as it happens (scripts/failure_log.py), so a pytest that is killed before its summary still
leaves the list of what failed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_paths() -> list[str]:
    candidates = [
        ROOT / "protocol" / "tests",
        *sorted((ROOT / "packages").glob("*/tests")),
        *sorted((ROOT / "plugins").glob("*/tests")),
        ROOT / "tests",
    ]
    return [str(path.relative_to(ROOT)) for path in candidates if path.is_dir() and any(path.rglob("test_*.py"))]


def workers(arguments: list[str]) -> list[str]:
    """The pytest-xdist options, unless the caller chose them."""
    if any(
        argument in ("-n", "--numprocesses") or argument.startswith(("-n", "--numprocesses=")) for argument in arguments
    ):
        return []
    count = os.environ.get("ROLLOUTGYM_TEST_WORKERS", "").strip()
    number = int(count) if count.isdigit() else min(os.cpu_count() or 1, 4)
    return ["-n", str(number)] if number > 0 else []


# pytest with the failure log plugin (scripts/failure_log.py) loaded in the controller only.
LAUNCH = (
    f"import sys; sys.path.insert(0, {str(ROOT / 'scripts')!r}); import failure_log, pytest; "
    "sys.exit(pytest.main(sys.argv[1:], plugins=[failure_log]))"
)


def adopt_orphans() -> bool:
    """Become the reaper of this run's orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``): a server or worker
    that a test started and lost, even in a new session, is re-parented here instead of to init."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    return bool(ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0)


def _children() -> dict[int, str]:
    """This process's live children (zombies are reaped, not listed): pid -> command line."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError):
            continue
        if int(parent) == os.getpid() and state != "Z":
            found[int(entry.name)] = command
    return found


def stop_leftovers() -> list[str]:
    """Stop every process the tests left running (TERM, then KILL after 5 s; their children are re-parented here and
    stopped in the next round) and name them."""
    stopped: list[str] = []
    for _ in range(20):
        children = _children()
        if not children:
            break
        stopped += [command[:120] for command in children.values()]
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and set(children) & set(_children()):
            time.sleep(0.1)
        for pid in set(children) & set(_children()):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return stopped


def main() -> int:
    arguments = sys.argv[1:]
    durations = [] if any(argument.startswith("--durations") for argument in arguments) else ["--durations=30"]
    arguments = [*workers(arguments), *durations, *arguments]
    # Paths given on the command line replace the whole suite's (hatch run test plugins/sql/tests).
    chosen = any(not argument.startswith("-") and Path(argument.split("::")[0]).exists() for argument in arguments)
    command = [sys.executable, "-c", LAUNCH, *([] if chosen else test_paths()), *arguments]
    print("+", " ".join(command), flush=True)
    reaping = adopt_orphans()
    failures = Path(tempfile.mkstemp(prefix="rolloutgym-test-failures-", suffix=".txt")[1])
    process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "ROLLOUTGYM_TEST_FAILURES": str(failures)})
    # SIGTERM (a CI timeout, kill) reaches pytest as an interrupt, then the clean-up below runs.
    signal.signal(signal.SIGTERM, lambda number, frame: process.send_signal(signal.SIGINT))
    while True:
        try:
            code = process.wait()
            break
        except KeyboardInterrupt:  # Ctrl-C reached pytest too (same process group): wait for it to end
            continue
    if reaping and (stopped := stop_leftovers()):
        print(f"stopped {len(stopped)} process(es) the tests left running:", *stopped, sep="\n  ", file=sys.stderr)
    recorded = failures.read_text(encoding="utf-8") if failures.exists() else ""
    failures.unlink(missing_ok=True)
    if code not in (0, 1, 5) and recorded:  # pytest did not end on its own (killed, crashed): no summary was printed
        print(f"pytest ended with {code} before its summary; the tests that had failed:\n{recorded}", file=sys.stderr)
    if code == 5:
        print("error: pytest collected no tests; the suite must not pass empty", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
