"""Learning you can see on a real model: GRPO on SmolLM2-135M-Instruct, before/after with standard errors.

For each seed: evaluate ``hf:smollm2`` on the test split of ``--env`` (default ``trl/sums-v0``,
where it starts between 10 % and 60 %), train it with ``rolloutgym_trl.train_grpo`` (TRL's
``GRPOTrainer``, the batched rollout function, dynamic sampling, optional difficulty
pre-pass), evaluate the trained model on the same test tasks the same way, and print the
change paired by task with its standard error. The evaluations are batched
(:func:`rolloutgym_trl.selection.batched_rewards`: ``--eval-samples`` episodes per test task,
greedy by default, ``--eval-temperature`` to sample), so they cost minutes, not the training
budget.

    python benchmarks/train_real.py [--seeds 0 1] [--steps 40] [--lr 2e-5] [--out results.json]

Target (issue 31): in both seeds the test pass rate rises by more than 3 standard errors, in
at most 30 minutes of CPU each on the 2-core machine. The run prints the per-step curve as
a table (reward, pass rate, groups with signal, |advantage|, seconds) and the wall and CPU
time and load average per seed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def _test_keys(env_id: str, limit: int | None) -> list[str]:
    import rolloutgym as rg

    tasks = [task for task in rg.get_registry().tasks(env_id) if getattr(task, "split", None) == "test"]
    return [f"{env_id}#{task.id}" for task in tasks][:limit]


def _evaluate(model_ref: str, keys: list[str], arguments: argparse.Namespace) -> dict[str, float]:
    import torch
    from rolloutgym_trl._models import load_trainable
    from rolloutgym_trl.selection import batched_rewards

    trainable = load_trainable(model_ref, device="cuda" if torch.cuda.is_available() else "cpu")
    sampling = {"max_tokens": arguments.max_tokens, "temperature": arguments.eval_temperature, "seed": 12345}
    rewards = batched_rewards(trainable.model, trainable.tokenizer, keys, arguments.eval_samples, sampling)
    del trainable
    return {key: sum(value >= 1.0 for value in values) / len(values) for key, values in rewards.items() if values}


def _key_values(pairs: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def _curve_table(records: list[dict[str, Any]], every: int) -> list[str]:
    steps = [record for record in records if "reward" in record and record.get("event") != "end"]
    lines = [
        "| steps | reward | train pass | groups with signal | resampled | abs adv | s/step |",
        "|---|---|---|---|---|---|---|",
    ]
    for start in range(0, len(steps), every):
        chunk = steps[start : start + every]

        def mean(key: str, chunk: list[dict[str, Any]] = chunk) -> float:
            values = [float(record[key]) for record in chunk if isinstance(record.get(key), (int, float))]
            return statistics.fmean(values) if values else float("nan")

        lines.append(
            f"| {chunk[0]['step']}-{chunk[-1]['step']} | {mean('reward'):.3f} | {mean('rolloutgym/pass_rate'):.1%} "
            f"| {mean('rolloutgym/groups_with_spread'):.0%} | {mean('rolloutgym/resampled_groups'):.1f} "
            f"| {mean('rolloutgym/advantage_abs'):.2f} | {mean('seconds'):.1f} |"
        )
    return lines


def run_seed(seed: int, arguments: argparse.Namespace, keys: list[str], before: dict[str, float]) -> dict[str, Any]:
    from rolloutgym_trl import train_grpo
    from rolloutgym_trl.stats import paired_change

    out = Path(arguments.work) / f"seed{seed}"
    wall, cpu = time.perf_counter(), time.process_time()
    loads = [os.getloadavg()[0]]

    def progress(record: dict[str, Any]) -> None:
        if "reward" in record and record.get("event") != "end":
            loads.append(os.getloadavg()[0])
            print(
                f"  seed {seed} step {record.get('step')}: reward {record.get('reward', 0):.3f} "
                f"pass {record.get('rolloutgym/pass_rate', 0):.0%} "
                f"signal {record.get('rolloutgym/groups_with_spread', 0):.0%} {record.get('seconds', 0):.1f} s",
                flush=True,
            )

    result = train_grpo(
        arguments.env,
        arguments.model,
        out=out,
        steps=arguments.steps,
        num_generations=arguments.num_generations,
        prompts_per_step=arguments.prompts_per_step,
        max_tokens=arguments.max_tokens,
        learning_rate=arguments.lr,
        temperature=arguments.temperature,
        seed=seed,
        evaluate=False,
        threads=arguments.threads,
        select_tasks=arguments.select_tasks,
        trainer_overrides={"lr_scheduler_type": "constant", "warmup_steps": 0, **_key_values(arguments.trainer_arg)},
        on_log=progress,
    )
    train_wall, train_cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = _evaluate(f"hf:{out}", keys, arguments)
    change = paired_change(before, after)
    assert change is not None
    return {
        "seed": seed,
        "before": change.before,
        "before_error": change.before_error,
        "after": change.after,
        "after_error": change.after_error,
        "delta": change.delta,
        "error": change.error,
        "z": change.z,
        "tasks": change.tasks,
        "line": change.line(),
        "train_wall_minutes": train_wall / 60,
        "train_cpu_minutes": train_cpu / 60,
        "load_average": statistics.fmean(loads),
        "task_selection": result.extra.get("task_selection"),
        "curve": _curve_table(result.records, max(1, arguments.steps // 8)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="hf:smollm2")
    parser.add_argument("--env", default="trl/sums-v0")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--prompts-per-step", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=12)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--select-tasks", type=int, default=0, help="difficulty pre-pass: episodes per train task")
    parser.add_argument("--eval-samples", type=int, default=1, help="episodes per test task, before and after")
    parser.add_argument(
        "--eval-temperature", type=float, default=0.0, help="0: greedy (one episode per task is enough)"
    )
    parser.add_argument("--eval-limit", type=int, default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trainer-arg", action="append", default=[], help="KEY=VALUE GRPOConfig field (repeatable)")
    parser.add_argument("--work", default=None, help="where the trained models go (default: a temp folder)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    arguments = parser.parse_args()
    arguments.work = arguments.work or tempfile.mkdtemp(prefix="train_real.")

    import torch

    torch.set_num_threads(arguments.threads)
    keys = _test_keys(arguments.env, arguments.eval_limit)
    started = time.perf_counter()
    before = _evaluate(arguments.model, keys, arguments)
    print(
        f"before: {statistics.fmean(before.values()):.1%} on {len(before)} test tasks "
        f"({arguments.eval_samples} episodes each, {time.perf_counter() - started:.0f} s)",
        flush=True,
    )
    results = []
    for seed in arguments.seeds:
        results.append(run_seed(seed, arguments, keys, before))
        if arguments.out:
            Path(arguments.out).write_text(json.dumps({"arguments": vars(arguments), "results": results}, indent=1))
    print(
        f"\n{arguments.model} GRPO on {arguments.env}: {arguments.steps} steps x "
        f"{arguments.num_generations * arguments.prompts_per_step} episodes, lr {arguments.lr}"
    )
    for result in results:
        verdict = "rise > 3 standard errors" if result["z"] > 3 else "NOT above 3 standard errors"
        print(f"seed {result['seed']}: {result['line']}  [{verdict}]")
        print(
            f"  training {result['train_wall_minutes']:.1f} min wall, {result['train_cpu_minutes']:.1f} min CPU, "
            f"load average {result['load_average']:.1f}"
        )
        print("\n".join(f"  {line}" for line in result["curve"]))


if __name__ == "__main__":
    main()
