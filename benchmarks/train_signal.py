"""Proof that rewards teach, long version: GRPO through the TRL integration, per-step figures.

Trains ``hf:tiny`` (or ``--model hf:smollm2``) with TRL's ``GRPOTrainer`` on
``trl/digits-v0`` through :class:`rolloutgym_trl.RolloutFunction` (rolloutgym's token loop
plays every episode: env reset, rendering, sampling, parsing, grading), and prints the
reward curve, pass rate and wall time per step, then the before/after evaluation on the
test split.

Then it runs the same training loop with the env and *without the env* in alternating pairs
(``--pairs``): the second ``rollout_func`` renders the same prompts, samples with the same
sampler and scores the decoded reply with the same grading function (``digit_share``)
directly, with no env object, no rolloutgym episode and no Score records. The difference in
time per step is the env's (and the episode loop's) share.

    python benchmarks/train_signal.py [--model hf:tiny] [--steps 40] [--max-tokens 8] [--lr 1e-2]

Target: the mean reward of the first steps <= 0.2, of the last steps >= 0.8.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


class BareRolloutFunction:
    """The same sampling and grading as ``RolloutFunction`` on ``trl/digits-v0``, without the env."""

    def __init__(self, max_tokens: int, seed: int) -> None:
        self.max_tokens = max_tokens
        self.seed = seed
        self.calls = 0
        self._sampler: Any = None
        self._renderer: Any = None

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        from rolloutgym.llm import ChatTemplateRenderer, SamplingParams
        from rolloutgym_transformers import TransformersSampler
        from rolloutgym_trl.envs import digit_share

        if self._sampler is None:
            model = trainer.accelerator.unwrap_model(trainer.model)
            self._sampler = TransformersSampler(model, trainer.processing_class, device=str(trainer.accelerator.device))
            self._renderer = ChatTemplateRenderer(trainer.processing_class)
        output: dict[str, list[Any]] = {
            "prompt_ids": [],
            "completion_ids": [],
            "logprobs": [],
            "env_reward": [],
            "env_passed": [],
        }
        for index, prompt in enumerate(prompts):
            messages = [{"role": message["role"], "content": message["content"]} for message in prompt]
            prompt_ids = self._renderer.render_prompt(messages, [])
            params = SamplingParams(
                max_tokens=self.max_tokens,
                temperature=float(trainer.args.temperature),
                stop_token_ids=tuple(self._renderer.stop_token_ids),
                seed=self.seed + 1000 * (self.calls * len(prompts) + index),
            )
            sample = self._sampler.sample_sync(prompt_ids, params)
            reward = digit_share(self._renderer.decode(sample.token_ids))
            output["prompt_ids"].append(list(prompt_ids))
            output["completion_ids"].append(list(sample.token_ids))
            output["logprobs"].append(list(sample.logprobs or [0.0] * len(sample.token_ids)))
            output["env_reward"].append(reward)
            output["env_passed"].append(reward >= 1.0)
        self.calls += 1
        return output


def loop_run(arguments: argparse.Namespace, out: str, with_env: bool) -> list[dict[str, Any]]:
    """The same GRPO loop and settings as train_grpo (no evaluations), with the env or without it.

    ``with_env``: rolloutgym's ``RolloutFunction`` (env, episode loop, Score records);
    else :class:`BareRolloutFunction`. Nothing else differs between the two.
    """
    from rolloutgym_trl._logging import TrainingLogWriter, library_warnings_quiet, quiet_progress_bars
    from rolloutgym_trl._models import load_trainable
    from rolloutgym_trl._training import _quiet
    from rolloutgym_trl.datasets import train_dataset
    from rolloutgym_trl.grpo import grpo_config
    from rolloutgym_trl.rollout import RolloutFunction
    from rolloutgym_trl.rollout_fields import env_reward
    from trl import GRPOTrainer

    if with_env:
        rollout_func: Any = RolloutFunction(max_tokens=arguments.max_tokens, seed=arguments.seed)
    else:
        rollout_func = BareRolloutFunction(arguments.max_tokens, arguments.seed)

    quiet_progress_bars()
    with library_warnings_quiet():
        trainable = load_trainable(arguments.model)
        mode = "env" if with_env else "bare"
        log = TrainingLogWriter(os.path.join(out, f"{mode}_log.jsonl"), {"trainer": "grpo", "mode": mode})
        trainer = GRPOTrainer(
            model=trainable.model,
            reward_funcs=[env_reward],
            args=grpo_config(
                out,
                steps=arguments.steps,
                num_generations=arguments.num_generations,
                prompts_per_step=arguments.prompts_per_step,
                max_tokens=arguments.max_tokens,
                learning_rate=arguments.lr,
                beta=0.0,
                temperature=1.0,
                seed=arguments.seed,
                overrides={"lr_scheduler_type": "constant"},
            ),
            train_dataset=train_dataset("trl/digits-v0"),
            processing_class=trainable.tokenizer,
            rollout_func=rollout_func,
            callbacks=[log.callback()],
        )
        _quiet(trainer)
        trainer.train()
    return [record for record in log.records if "reward" in record and "loss" in record]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="hf:tiny")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--prompts-per-step", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=3, help="alternating with/without-env loop pairs")
    arguments = parser.parse_args()

    import torch
    from rolloutgym_trl import train_grpo

    torch.set_num_threads(arguments.threads)
    with tempfile.TemporaryDirectory(prefix="train-signal-") as folder:
        started = time.perf_counter()
        result = train_grpo(
            "trl/digits-v0",
            arguments.model,
            out=os.path.join(folder, "model"),
            steps=arguments.steps,
            num_generations=arguments.num_generations,
            prompts_per_step=arguments.prompts_per_step,
            max_tokens=arguments.max_tokens,
            learning_rate=arguments.lr,
            seed=arguments.seed,
            threads=arguments.threads,
            eval_rollouts=2,
            trainer_overrides={"lr_scheduler_type": "constant"},
        )
        with_env_total = time.perf_counter() - started
        steps = [record for record in result.records if "reward" in record and "loss" in record]
        print(
            f"GRPO on trl/digits-v0, model {arguments.model}, {arguments.num_generations} episodes x "
            f"{arguments.prompts_per_step} tasks per step, lr {arguments.lr}, seed {arguments.seed}"
        )
        print(f"{'step':>5} {'reward':>7} {'std':>6} {'pass':>6} {'loss':>8} {'seconds':>8} {'cpu s':>8}")
        for record in steps:
            print(
                f"{int(record['step']):>5} {record['reward']:>7.3f} {record.get('reward_std', 0.0):>6.3f} "
                f"{record.get('rolloutgym/pass_rate', 0.0):>6.1%} {record['loss']:>8.4f} {record['seconds']:>8.3f} "
                f"{record['cpu_seconds']:>8.3f}"
            )
        rewards = [record["reward"] for record in steps]
        head, tail = statistics.mean(rewards[:3]), statistics.mean(rewards[-5:])
        print(f"mean reward: first 3 steps {head:.3f} (target <= 0.2), last 5 steps {tail:.3f} (target >= 0.8)")
        if result.comparison is not None:
            print("\n".join(result.comparison.lines()))
        print(f"total with evaluations: {with_env_total:.1f} s")

        # The env's share: the same training loop with and without the env, in alternating
        # pairs (the machine's speed drifts); the best median per side.
        medians: dict[tuple[bool, str], list[float]] = {}
        bare: list[dict[str, Any]] = []
        for pair in range(arguments.pairs):
            for with_env in (False, True):
                records = loop_run(arguments, os.path.join(folder, f"pair{pair}-{with_env}"), with_env)
                bare = records if not with_env else bare
                for key in ("seconds", "cpu_seconds"):
                    medians.setdefault((with_env, key), []).append(statistics.median(r[key] for r in records))
    for key, what in (("seconds", "wall"), ("cpu_seconds", "CPU")):
        with_env, without_env = min(medians[True, key]), min(medians[False, key])
        print(
            f"median {what} time per step (best of {arguments.pairs} alternating pairs): with the env "
            f"{with_env:.3f} s, same loop without the env {without_env:.3f} s; ratio {with_env / without_env:.2f}x; "
            f"env share of a step {1 - without_env / with_env:.1%}"
        )
        print(
            "  per pair (with / without): "
            + ", ".join(f"{a:.3f}/{b:.3f}" for a, b in zip(medians[True, key], medians[False, key], strict=True))
        )
    print(
        f"bare loop reward: first 3 steps {statistics.mean(r['reward'] for r in bare[:3]):.3f}, "
        f"last 5 steps {statistics.mean(r['reward'] for r in bare[-5:]):.3f}"
    )
    return 0 if head <= 0.2 and tail >= 0.8 else 1


if __name__ == "__main__":
    sys.exit(main())
