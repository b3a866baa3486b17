"""Peak memory of ``rolloutgym train sft|grpo`` on a real model, one configuration per process.

Each configuration runs ``rolloutgym train ...`` as its own process (``--steps 3 --no-eval
--threads 2``; GRPO on ``trl/sums-v0`` with at most 12 tokens, 2 tasks x 8 episodes per step;
SFT on 16 oracle rows of ``trl/sums-v0``, made once with ``rolloutgym run``) and prints the
process's peak resident size (``wait4``'s ``ru_maxrss``: anonymous memory and the memory-mapped
weights it touched), its wall and CPU time, and the load average before and after.

    python benchmarks/train_memory.py [--model hf:smollm2] [--configs grpo-lora grpo-one-pass ...]

Target (issue 31): SmolLM2-135M SFT and GRPO peak at most 2 GB. The converted checkpoint must
already be cached (run any ``--policy hf:smollm2`` command once), or the first configuration
also pays the conversion.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRPO = ["grpo", "trl/sums-v0", "--max-tokens", "12"]
SFT = ["sft", "{run}"]
CONFIGS: dict[str, list[str]] = {
    # GRPO: the default scores a step's 16 episodes 4 at a time; --micro-batch 16 is the one pass of before
    "grpo-full": GRPO,
    "grpo-full-one-pass": [*GRPO, "--micro-batch", "16"],
    "grpo-full-adafactor": [
        *GRPO,
        "--trainer-arg",
        "optim=adafactor",
        "--trainer-arg",
        "activation_checkpointing=true",
    ],
    "grpo-lora": [*GRPO, "--lora"],
    "grpo-lora-one-pass": [*GRPO, "--lora", "--micro-batch", "16"],
    "grpo-lora-checkpointing": [*GRPO, "--lora", "--trainer-arg", "activation_checkpointing=true"],
    # SFT: 4 rows per step
    "sft-full": SFT,
    "sft-full-adafactor": [*SFT, "--trainer-arg", "optim=adafactor", "--trainer-arg", "activation_checkpointing=true"],
    "sft-lora": [*SFT, "--lora"],
}


def _cli() -> list[str]:
    return [sys.executable, "-c", "import sys; from rolloutgym.cli import console_main; sys.exit(console_main())"]


def _sft_run(work: Path) -> Path:
    run = work / "sums-oracle.jsonl"
    if not run.exists():
        command = [*_cli(), "run", "trl/sums-v0", "--policy", "oracle", "--split", "train", "--limit", "16"]
        subprocess.run([*command, "-q", "--out", str(run)], check=True, stdout=subprocess.DEVNULL)
    return run


def measure(name: str, model: str, work: Path) -> dict[str, float | str]:
    """Run one configuration in a child process; its peak RSS (GB), wall and CPU seconds, and the load."""
    arguments = [part.replace("{run}", str(_sft_run(work))) if part == "{run}" else part for part in CONFIGS[name]]
    command = [*_cli(), "train", *arguments, "--model", model, "--steps", "3", "--no-eval", "--threads", "2"]
    command += ["--out", str(work / name)]
    load_before = os.getloadavg()
    started = time.perf_counter()
    with open(work / f"{name}.log", "w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if status:
        raise SystemExit(f"{name} failed (exit status {status}); see {work / f'{name}.log'}")
    return {
        "config": name,
        "peak_gb": usage.ru_maxrss * 1024 / 1e9,  # ru_maxrss is in KiB on Linux
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "load": f"{load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="hf:smollm2")
    parser.add_argument("--configs", nargs="+", choices=sorted(CONFIGS), default=list(CONFIGS))
    parser.add_argument("--work", default=None, help="where the run file, models and logs go (default: a temp folder)")
    arguments = parser.parse_args()
    work = Path(arguments.work or tempfile.mkdtemp(prefix="train-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {' '.join(f'{value:.2f}' for value in os.getloadavg())}; work folder {work}")
    print(f"{'configuration':<26} {'peak RSS':>9} {'wall':>8} {'CPU':>8}  load (1 min)")
    for name in arguments.configs:
        row = measure(name, arguments.model, work)
        print(
            f"{name:<26} {row['peak_gb']:>6.2f} GB {row['wall_s']:>7.1f}s {row['cpu_s']:>7.1f}s  {row['load']}",
            flush=True,
        )
    print(f"load average after: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
