"""Run every benchmark script in this folder (each prints its own ratios)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failures = 0
    only = set(sys.argv[1:])
    for script in sorted(HERE.glob("*.py")):
        if script.name == "run_all.py" or (only and script.stem not in only):
            continue
        print(f"\n=== {script.name} ===", flush=True)
        failures += subprocess.run([sys.executable, str(script)]).returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
