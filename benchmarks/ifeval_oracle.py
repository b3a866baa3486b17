"""ifeval/instructions-v0 on every task: oracle, null, and our verdict against if-verifiable's own.

For each of the 460 tasks, four replies: the oracle's, the near miss, the next task's oracle
and the empty reply. Each is graded by the env and by the package's public
``evaluate_output_for_sample("ifeval", sample, reply)`` (strict, prompt level). Prints the
oracle and null means per checker, the agreement, and the cost of one grading: the env's
against the package's evaluator alone, measured here.

    python -P benchmarks/ifeval_oracle.py
"""

from __future__ import annotations

import time
from collections import Counter


def main() -> None:
    import if_verifiable
    from rolloutgym_benchmarks.ifeval_envs import grade, load_tasks, package_version

    tasks = load_tasks()
    print(f"if-verifiable {package_version()}: {len(tasks)} tasks")
    oracle: Counter[str] = Counter()
    null: Counter[str] = Counter()
    count: Counter[str] = Counter()
    agree = cases = 0
    ours_time = theirs_time = 0.0
    disagreements = []
    for index, task in enumerate(tasks):
        checker = task.instruction_id_list[0]
        count[checker] += 1
        sample = if_verifiable.IFEvalSample(index, task.prompt, list(task.instruction_id_list), list(task.kwargs))
        for name, reply in (
            ("oracle", task.oracle),
            ("near miss", task.near_miss),
            ("other", tasks[(index + 1) % len(tasks)].oracle),
            ("empty", ""),
        ):
            # CPU time, and the two graders take turns going first (the first pays the cold caches).
            first_ours = cases % 2 == 0
            if not first_ours:
                started = time.process_time()
                theirs = if_verifiable.evaluate_output_for_sample("ifeval", sample, reply)[1].binary_strict == 1.0
                theirs_time += time.process_time() - started
            started = time.process_time()
            ours = grade(task, reply).value == 1.0
            ours_time += time.process_time() - started
            if first_ours:
                started = time.process_time()
                theirs = if_verifiable.evaluate_output_for_sample("ifeval", sample, reply)[1].binary_strict == 1.0
                theirs_time += time.process_time() - started
            cases += 1
            agree += ours == theirs
            if ours != theirs:
                disagreements.append((task.id, name, ours, theirs))
            if name == "oracle":
                oracle[checker] += ours
            if name == "empty":
                null[checker] += ours
    for checker, total in count.items():
        print(f"{checker:48s} {total:3d} tasks  oracle {oracle[checker] / total:.4f}  null {null[checker] / total:.4f}")
    print(
        f"all: oracle {sum(oracle.values()) / len(tasks):.4f}  null {sum(null.values()) / len(tasks):.4f}; "
        f"verdicts agree with if-verifiable on {agree}/{cases} replies"
    )
    for disagreement in disagreements:
        print("  disagreement:", disagreement)
    print(
        f"grading (CPU time): env {ours_time / cases * 1000:.2f} ms per reply, "
        f"package's evaluator {theirs_time / cases * 1000:.2f} "
        f"ms (ratio {ours_time / theirs_time:.2f}x)"
    )


if __name__ == "__main__":
    main()
