"""Run the whole test suite (every package's tests/ and the top-level tests/).

Exits non-zero when pytest collects no test at all (pytest's exit code 5), so an empty
run never passes silently. Extra arguments go to pytest.
"""

from __future__ import annotations

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


def main() -> int:
    arguments = sys.argv[1:]
    command = [sys.executable, "-m", "pytest", *test_paths(), *arguments]
    print("+", " ".join(command), flush=True)
    code = subprocess.run(command, cwd=ROOT).returncode
    if code == 5:
        print("error: pytest collected no tests; the suite must not pass empty", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
