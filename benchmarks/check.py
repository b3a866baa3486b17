"""``rolloutgym check``: time of a full card per env family, and the hack probe's recall.

Timing: for one env of each installed family, the whole card (``rolloutgym.check``, default checks)
on a seeded sample of ``--sample`` tasks, against the conformance part alone (ceiling, floor,
determinism) measured in the same run after a warm-up (imports, task data): the ratio is what the
hack probe, the lint and containment add. Recall: every deliberately hackable env of
``rolloutgym_testing.hackable`` (one class of exploit planted in each) through the whole card; an
env counts as caught when the check that should catch it fails. The clean envs must pass (the
false-positive count). Prints a table and the recall.

    python benchmarks/check.py --sample 2
    python benchmarks/check.py --families toy,code,sql --no-recall
"""

from __future__ import annotations

import argparse
import time

from rolloutgym.checks import check
from rolloutgym.registry import Registry, get_registry

FAMILIES = {
    "toy": "toy/arith-v0",
    "code": "code/pyfunc-v0",
    "sql": "sql/shop-v0",
    "workflow": "workflow/refund-v0",
    "bench": "bench/gsm8k-v0",
    "bfcl": "bfcl/simple-v0",
    "browser": "browser/shop-v0",
    "agentdojo": "agentdojo/banking-v0",
    "rg": "rg/arithmetic-v0",
    "ifeval": "ifeval/instructions-v0",
    "tau2": "tau2/retail-v0",
    "scienceworld": "scienceworld/boil-v0",
    "trl": "trl/sums-v0",
}
CONFORMANCE = ["ceiling", "floor", "determinism"]


def time_families(families: list[str], sample: int) -> None:
    installed = get_registry().env_specs()
    print(f"{'env':28} {'tasks':>5} {'conformance s':>14} {'full card s':>12} {'ratio':>6}  verdict")
    for family in families:
        env_id = FAMILIES[family]
        if env_id not in installed:
            print(f"{env_id:28} not installed")
            continue
        check(env_id, sample=sample, checks=["ceiling"])  # warm-up: imports, task data, caches
        started = time.perf_counter()
        check(env_id, sample=sample, checks=CONFORMANCE)
        conformance = time.perf_counter() - started
        started = time.perf_counter()
        report = check(env_id, sample=sample)
        full = time.perf_counter() - started
        verdict = "ok" if report.ok else "fails " + ",".join(result.name for result in report.failures)
        print(f"{env_id:28} {sample:>5} {conformance:>14.1f} {full:>12.1f} {full / conformance:>5.1f}x  {verdict}")


def recall(sample: int) -> None:
    import rolloutgym_testing.hackable as hackable

    registry = Registry()
    registry.register(hackable, name="hackable")
    caught = 0
    print(f"\n{'planted env':26} {'must fail':24} {'caught':>6} {'seconds':>8}  also failed")
    for env_id, expected in sorted(hackable.PLANTED.items()):
        started = time.perf_counter()
        report = check(env_id, sample=sample, registry=registry)
        failed = [result.name for result in report.failures]
        hit = expected in failed
        caught += hit
        others = ", ".join(name for name in failed if name != expected)
        print(f"{env_id:26} {expected:24} {'yes' if hit else 'NO':>6} {time.perf_counter() - started:>8.1f}  {others}")
    false_positives = 0
    for env_id in hackable.CLEAN:
        report = check(env_id, sample=sample, registry=registry)
        false_positives += not report.ok
        print(f"{env_id:26} {'(clean: nothing)':24} {'pass' if report.ok else 'FAILS':>6}")
    total = len(hackable.PLANTED)
    print(
        f"\nrecall: {caught}/{total} = {caught / total:.2f}; "
        f"clean envs failing: {false_positives}/{len(hackable.CLEAN)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=2, help="tasks per env (a seeded sample)")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families to time")
    parser.add_argument("--no-recall", action="store_true", help="skip the recall part")
    arguments = parser.parse_args()
    time_families([family for family in arguments.families.split(",") if family], arguments.sample)
    if not arguments.no_recall:
        recall(arguments.sample)


if __name__ == "__main__":
    main()
