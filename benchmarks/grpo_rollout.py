"""The rollout part of a GRPO step: a step's episodes batched vs one at a time (issue 31).

Calls :class:`rolloutgym_trl.RolloutFunction` exactly as ``GRPOTrainer`` does (``rollout_func(prompts,
trainer)``, the trainer being a holder of the attributes it reads) on one group of ``--episodes``
episodes of ``trl/sums-v0``, with ``batched=True`` (one :class:`TransformersBatchSampler` call per
wave: one padded forward pass per decoded token for all episodes) and ``batched=False`` (one episode
after another through the per-request sampler), in alternating pairs so that both see the same machine
load. Dynamic sampling is off (the same number of episodes each way).

    python benchmarks/grpo_rollout.py [--model hf:smollm2] [--episodes 8] [--max-tokens 16] [--pairs 4]

Target: batched >= 2x faster than one at a time at 8 episodes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="hf:smollm2")
    parser.add_argument("--env", default="trl/sums-v0")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    arguments = parser.parse_args()

    import torch
    from rolloutgym_trl import RolloutFunction, train_dataset
    from rolloutgym_trl._models import load_trainable

    torch.set_num_threads(arguments.threads)
    trainable = load_trainable(arguments.model)
    trainable.model.eval()
    dataset = train_dataset(arguments.env, split="train")
    trainer = SimpleNamespace(
        model=trainable.model,
        processing_class=trainable.tokenizer,
        args=SimpleNamespace(max_completion_length=arguments.max_tokens, temperature=1.0, top_p=1.0),
        accelerator=SimpleNamespace(unwrap_model=lambda model: model, device="cpu"),
        train_dataset=dataset,
        use_vllm=False,
    )
    functions = {
        mode: RolloutFunction(
            max_tokens=arguments.max_tokens, seed=0, dynamic_sampling="off", batched=mode == "batched"
        )
        for mode in ("batched", "one at a time")
    }
    times: dict[str, list[float]] = {mode: [] for mode in functions}
    tokens: dict[str, list[int]] = {mode: [] for mode in functions}
    for pair in range(arguments.pairs + 1):  # pair 0 warms both paths up and is not counted
        prompts = [dataset[pair % len(dataset)]["prompt"]] * arguments.episodes
        for mode, function in functions.items():
            started = time.perf_counter()
            output = function(prompts, trainer)
            if pair:
                times[mode].append(time.perf_counter() - started)
                tokens[mode].append(sum(sum(mask) for mask in output["env_mask"]))
    print(
        f"{arguments.model} on {arguments.env}: {arguments.episodes} episodes per step, "
        f"max {arguments.max_tokens} tokens, {arguments.threads} threads, {arguments.pairs} alternating pairs"
    )
    for mode in functions:
        print(
            f"  {mode:<14} median {statistics.median(times[mode]):6.2f} s per step "
            f"(min {min(times[mode]):.2f}, max {max(times[mode]):.2f}; "
            f"{statistics.mean(tokens[mode]):.0f} sampled tokens)"
        )
    ratio = statistics.median(times["one at a time"]) / statistics.median(times["batched"])
    print(f"  batched is {ratio:.2f}x faster (target >= 2x)   load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
