"""CLI start-up and env lookups against ``import rolloutgym`` and against the old lookup path, in one run.

Every figure is a fresh process (median of N), so imports count. Target (issue 3): listing with
every plugin installed costs < 0.3 s more than importing rolloutgym, because listing imports
only plugin modules and spec objects, never the heavy libraries. Issue 46: a lookup of
``ns/name-vN`` imports only the plugin that declares ``ns`` (entry point group
``rolloutgym.envs``) and listing imports no env module. The old path is measured in the same
run: the core's and the benchmarks plugin's sources of ``--baseline`` (a git revision from before
issue 46) are extracted with ``git archive`` and put first on ``PYTHONPATH``, so the same
interpreter and the same other plugins run the old registry and the old benchmarks hook.

    python benchmarks/cli_startup.py --repeats 7
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "552da79"  # the last commit before issue 46's lookups
OLD_SOURCES = ("packages/rolloutgym/src", "plugins/benchmarks/src")
# In-process timings, printed by the child: a fresh Registry, then all specs or one lookup.
SPECS = (
    "import time; from rolloutgym.registry import Registry; r = Registry(); t = time.perf_counter(); "
    "r.env_specs(); print(time.perf_counter() - t)"
)
LOOKUP = (
    "import time; from rolloutgym.registry import Registry; r = Registry(); t = time.perf_counter(); "
    "r.resolve_env('toy/guess-v0'); print(time.perf_counter() - t)"
)


def old_tree(revision: str, into: Path) -> dict[str, str]:
    """The environment that runs ``revision``'s core and benchmarks plugin (extracted under ``into``)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, *OLD_SOURCES], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    paths = [str(into / source) for source in OLD_SOURCES]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")])}


def _once(command: list[str], env: dict[str, str] | None, out: Path | None) -> float:
    if out is not None:
        out.unlink(missing_ok=True)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - started


def timed(command: list[str], repeats: int, old: dict[str, str], out: Path | None = None) -> tuple[float, float]:
    """Median wall time of ``command`` as a fresh process, new path then old path alternately (a busy machine's
    load falls on both alike); ``out``: a file the command writes, removed before each."""
    new_samples, old_samples = [], []
    for _ in range(repeats):
        new_samples.append(_once(command, None, out))
        old_samples.append(_once(command, old, out))
    return statistics.median(new_samples), statistics.median(old_samples)


def _printed(code: str, env: dict[str, str] | None) -> float:
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def reported(code: str, repeats: int, old: dict[str, str]) -> tuple[float, float]:
    """Medians of the seconds a fresh process prints for ``code``, new path then old path alternately."""
    pairs = [(_printed(code, None), _printed(code, old)) for _ in range(repeats)]
    return statistics.median(new for new, _ in pairs), statistics.median(old for _, old in pairs)


def compare(label: str, new: float, old: float, unit: str = "s") -> None:
    scale = 1000 if unit == "ms" else 1
    print(f"{label:<44}: {new * scale:8.3f} {unit} (old path {old * scale:8.3f} {unit}; old/new {old / new:6.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the old lookup path")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        old = old_tree(args.baseline, Path(folder) / "old")
        out = Path(folder) / "run.jsonl"
        run = [python, "-m", "rolloutgym", "run", "toy/guess-v0", "--policy", "oracle", "-n", "1", "--out", str(out)]
        bare = statistics.median(_once([python, "-c", "pass"], None, None) for _ in range(args.repeats))
        imported = statistics.median(
            _once([python, "-c", "import rolloutgym"], None, None) for _ in range(args.repeats)
        )
        listing, listing_old = timed([python, "-m", "rolloutgym", "list"], args.repeats, old)
        running, running_old = timed(run, args.repeats, old, out=out)
        specs, specs_old = reported(SPECS, args.repeats, old)
        lookup, lookup_old = reported(LOOKUP, args.repeats, old)
    plugins = subprocess.run([python, "-m", "rolloutgym", "plugins"], capture_output=True, text=True).stdout.count(
        " loaded"
    )
    print(f"{'python -c pass':<44}: {bare:8.3f} s")
    print(f"{'python -c import rolloutgym':<44}: {imported:8.3f} s")
    compare(f"rolloutgym list ({plugins} plugins loaded)", listing, listing_old)
    print(f"{'list - import':<44}: {listing - imported:+8.3f} s (target < 0.300 s); ratio {listing / imported:.2f}x")
    compare("rolloutgym run toy/guess-v0 -p oracle -n 1", running, running_old)
    compare("Registry.env_specs() (in process)", specs, specs_old, "ms")
    compare("one lookup: resolve_env('toy/guess-v0')", lookup, lookup_old, "ms")


if __name__ == "__main__":
    main()
