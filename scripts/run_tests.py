"""Run the whole test suite (every package's tests/ and the top-level tests/).

Exits non-zero when pytest collects no test at all (pytest's exit code 5), so an empty
run never passes silently. Extra arguments go to pytest.

Tests run in parallel worker processes (pytest-xdist): one per CPU, at most four, or
``ROLLOUTGYM_TEST_WORKERS`` (``0`` runs them in this process). Passing ``-n``/``--numprocesses``
yourself overrides both. The 30 slowest tests are listed at the end (``--durations``), so CI's
log shows where its time goes.
"""

from __future__ import annotations

import os
import subprocess
import sys
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


def main() -> int:
    arguments = sys.argv[1:]
    durations = [] if any(argument.startswith("--durations") for argument in arguments) else ["--durations=30"]
    arguments = [*workers(arguments), *durations, *arguments]
    command = [sys.executable, "-m", "pytest", *test_paths(), *arguments]
    print("+", " ".join(command), flush=True)
    code = subprocess.run(command, cwd=ROOT).returncode
    if code == 5:
        print("error: pytest collected no tests; the suite must not pass empty", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
