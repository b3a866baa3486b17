"""The fixed cost of ``rg.run``: CPU seconds of a one-rollout run beyond ``import rolloutgym``.

Each figure is the CPU time (user + system) of a fresh Python process, read from
``getrusage(RUSAGE_CHILDREN)``, best of ``--repeats`` interleaved rounds:

* ``import``: ``python -c "import rolloutgym"`` (the baseline, measured in the same run);
* ``import + rg.run``: the same, then one ``toy/guess-v0`` oracle rollout written to a run file;
* in one fresh process after the import (``process_time``): ``get_registry()`` (plugin
  discovery and the env lookup, which a run builds first), the first ``rg.run``, a later one.

The fixed cost of a run is ``import + rg.run`` minus ``import`` (target: <= 0.1 s of CPU);
the registry line says how much of it is the env lookup.

Run: ``python benchmarks/run_fixed_cost.py [--repeats 5] [--env toy/guess-v0]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile

IMPORT = "import rolloutgym"
RUN = "import rolloutgym as rg, sys; rg.run(sys.argv[1], policy='oracle', num_rollouts=1, limit=1, out=sys.argv[2])"
# In one fresh process: the registry, then the first run (registry built), then a later run.
PARTS = """
import rolloutgym as rg, sys, time
from rolloutgym.registry import get_registry
clock = time.process_time
started = clock()
get_registry()
built = clock()
rg.run(sys.argv[1], policy='oracle', num_rollouts=1, limit=1, out=sys.argv[2] + '.1')
first = clock()
rg.run(sys.argv[1], policy='oracle', num_rollouts=1, limit=1, out=sys.argv[2] + '.2')
print(built - started, first - built, clock() - first)
"""


def child_cpu(code: str, *args: str) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--env", default="toy/guess-v0")
    args = parser.parse_args()
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    figures: dict[str, list[float]] = {"import": [], "import + rg.run": []}
    parts: list[list[float]] = []
    with tempfile.TemporaryDirectory() as folder:
        child_cpu(RUN, args.env, os.path.join(folder, "warm.jsonl"))  # byte-compile what the run imports
        for round_ in range(args.repeats):
            out = os.path.join(folder, f"run{round_}.jsonl")
            figures["import"].append(child_cpu(IMPORT)[0])
            figures["import + rg.run"].append(child_cpu(RUN, args.env, out)[0])
            parts.append([float(value) for value in child_cpu(PARTS, args.env, out + ".parts")[1].split()])
    best = {name: min(values) for name, values in figures.items()}
    registry, first, later = (min(column) for column in zip(*parts, strict=True))
    print(f"rg.run({args.env!r}, one oracle rollout), CPU time, best of {args.repeats} interleaved rounds")
    print(f"load average {load} at the start, {' '.join(f'{value:.1f}' for value in os.getloadavg())} at the end")
    for name, value in best.items():
        print(f"  fresh process, {name:<16} {value:6.3f} s")
    whole = best["import + rg.run"] - best["import"]
    print(f"  difference (the first run's fixed cost, whole processes): {whole:.3f} s")
    print("  in one process after the import:")
    print(f"    get_registry() (plugin discovery, env lookup) {registry:6.3f} s")
    print(f"    first rg.run, registry built                  {first:6.3f} s")
    print(f"    a later rg.run                                {later:6.3f} s")
    share = registry / (registry + first)
    print(f"  first run's fixed cost {registry + first:.3f} s (target <= 0.1 s), the registry {share:.0%} of it")


if __name__ == "__main__":
    main()
