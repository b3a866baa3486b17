"""`rolloutgym list` start-up time against `python -c "import rolloutgym"`, in one run.

Both are fresh processes (median of N). Target (issue 3): listing with every plugin installed
costs < 0.3 s more than importing rolloutgym, because listing imports only plugin modules
and spec objects, never the heavy libraries (playwright, torch, ray, datasets, openai, duckdb).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def timed(command: list[str], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    python = sys.executable
    bare = timed([python, "-c", "pass"], args.repeats)
    imported = timed([python, "-c", "import rolloutgym"], args.repeats)
    listing = timed([python, "-m", "rolloutgym", "list"], args.repeats)
    plugins = subprocess.run([python, "-m", "rolloutgym", "plugins"], capture_output=True, text=True).stdout.count(
        " loaded"
    )
    print(f"python -c pass          : {bare:.3f} s")
    print(f"python -c 'import rolloutgym': {imported:.3f} s")
    print(f"rolloutgym list         : {listing:.3f} s ({plugins} plugins loaded)")
    print(f"list - import           : {listing - imported:+.3f} s (target < 0.300 s); ratio {listing / imported:.2f}x")


if __name__ == "__main__":
    main()
