"""Lower memory without other math: GRPO micro-batches give the one-pass gradient; freed heap is handed back.

A step's 16 episodes are generated together and scored 4 at a time by default; TRL sums the
micro-batches' gradients (its ``dapo`` loss divides by the whole generation batch's token count),
so the gradient the optimizer sees must be the one of a single 16-episode pass. Checked on
``hf:tiny``: the same seeded step, once in one pass and once in micro-batches of 4 and of 2,
with the gradients read just before the optimizer step.
"""

from __future__ import annotations

import pytest
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_trl import train_grpo
from rolloutgym_trl._memory import micro_batch_size, release_freed_memory
from rolloutgym_trl.grpo import grpo_config

SCHEDULE = {
    "steps": 1,
    "num_generations": 8,
    "prompts_per_step": 2,
    "max_tokens": 6,
    "learning_rate": 1e-2,
    "beta": 0.0,
    "temperature": 1.0,
    "seed": 0,
}


def _first_step(tmp_path, micro_batch: int) -> tuple[dict[str, object], dict[str, object]]:
    """The trainer's batch settings and the gradients (by parameter name) before the first optimizer step."""
    import torch
    from transformers import TrainerCallback

    seen: dict[str, object] = {}
    gradients: dict[str, object] = {}

    class Capture(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            for key in ("per_device_train_batch_size", "gradient_accumulation_steps", "generation_batch_size"):
                seen[key] = getattr(args, key)

        def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
            if not gradients:
                for name, parameter in model.named_parameters():
                    if parameter.grad is not None:
                        gradients[name] = parameter.grad.detach().to(torch.float64).clone()

    train_grpo(
        "trl/digits-v0",
        "hf:tiny",
        out=tmp_path / f"micro-{micro_batch}",
        steps=1,
        max_tokens=6,
        seed=0,
        threads=1,
        evaluate=False,
        dynamic_sampling="off",
        micro_batch=micro_batch,
        callbacks=[Capture()],
    )
    return seen, gradients


def test_micro_batches_give_the_one_pass_gradient(tmp_path) -> None:
    import torch

    whole_settings, whole = _first_step(tmp_path, 16)
    assert whole_settings == {
        "per_device_train_batch_size": 16,
        "gradient_accumulation_steps": 1,
        "generation_batch_size": 16,
    }
    norm = torch.sqrt(sum((grad**2).sum() for grad in whole.values()))
    assert float(norm) > 1e-6  # the step has something to learn from, so the comparison means something
    for micro_batch in (4, 2):
        settings, split = _first_step(tmp_path, micro_batch)
        assert settings == {
            "per_device_train_batch_size": micro_batch,
            "gradient_accumulation_steps": 16 // micro_batch,
            "generation_batch_size": 16,  # the groups are still generated together
        }
        assert split.keys() == whole.keys()
        for name, grad in whole.items():
            torch.testing.assert_close(split[name], grad, rtol=1e-4, atol=1e-7 * float(norm), msg=name)


def test_default_micro_batch_is_the_largest_divisor_up_to_4(tmp_path) -> None:
    assert micro_batch_size(16, None) == 4
    assert micro_batch_size(6, None) == 3
    assert micro_batch_size(2, 0) == 2
    assert micro_batch_size(16, 8) == 8
    config = grpo_config(tmp_path, **SCHEDULE)
    assert (config.per_device_train_batch_size, config.gradient_accumulation_steps) == (4, 4)
    assert (config.generation_batch_size, config.steps_per_generation) == (16, 4)
    overrides = {"per_device_train_batch_size": 16, "gradient_accumulation_steps": 1}
    override = grpo_config(tmp_path, **SCHEDULE, overrides=overrides)
    assert (override.per_device_train_batch_size, override.generation_batch_size) == (16, 16)  # --trainer-arg wins


def test_a_micro_batch_that_does_not_divide_the_step_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"--micro-batch 5: a step has 16 episodes .* use one of 1, 2, 4, 8, 16"):
        micro_batch_size(16, 5)
    with pytest.raises(ConfigError, match="--micro-batch -2"):
        micro_batch_size(16, -2)


def test_freed_heap_is_handed_back_on_glibc() -> None:
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("malloc_trim is glibc's")
    assert release_freed_memory() is True
