"""Where does a model start? The cheap pre-pass that picks envs for ``train_real.py`` (issue 48).

GRPO learns where a model sometimes succeeds: an env where it starts near 0% gives groups with
no reward spread (no gradient), one near 100% has nothing left to learn. For each ``--env`` this
evaluates the model (default ``hf:smollm2``, SmolLM2-135M-Instruct) on the first ``--tasks`` test
tasks, ``--samples`` episodes each (sampled at temperature 1.0, so a group's spread shows), with
the same batched evaluation ``train_real.py`` uses, and prints the pass rate, the share of tasks
solved sometimes but not always (the tasks GRPO can learn from), the wall and CPU time, and the
load average. Run it under ``nice -n 10`` with ``--threads 1`` on a shared machine.

    python benchmarks/train_prepass.py --env rg/arithmetic-v0 sql/shop-v0 workflow/refund-v2 [--tasks 8]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", nargs="+", required=True)
    parser.add_argument("--model", default="hf:smollm2")
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=1)
    arguments = parser.parse_args()

    import torch
    from rolloutgym_trl._models import load_trainable
    from rolloutgym_trl.selection import batched_rewards
    from train_real import _test_keys

    torch.set_num_threads(arguments.threads)
    trainable = load_trainable(arguments.model)
    sampling = {"max_tokens": arguments.max_tokens, "temperature": 1.0, "seed": 12345}
    print(f"{arguments.model}: {arguments.tasks} test tasks x {arguments.samples} samples, temperature 1.0")
    print(f"{'env':28} {'pass rate':>10} {'tasks mixed':>12} {'wall s':>8} {'cpu s':>8} {'load':>6}")
    for env_id in arguments.env:
        keys = _test_keys(env_id, arguments.tasks)
        wall, cpu = time.perf_counter(), time.process_time()
        rewards = batched_rewards(trainable.model, trainable.tokenizer, keys, arguments.samples, sampling)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        values = [value for per_task in rewards.values() for value in per_task]
        passed = sum(value >= 1.0 for value in values) / len(values) if values else 0.0
        mixed = sum(len({value >= 1.0 for value in per_task}) == 2 for per_task in rewards.values())
        print(
            f"{env_id:28} {passed:10.1%} {mixed:>6}/{len(rewards):<5} {wall:8.0f} {cpu:8.0f} {os.getloadavg()[0]:6.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
