"""Hook implementations of rolloutgym-trl (no trl, torch or transformers imports here)."""

from __future__ import annotations

from typing import Any

from rolloutgym_protocol import EnvSpec, hookimpl


@hookimpl
def rolloutgym_envs() -> list[EnvSpec]:
    return [
        EnvSpec(
            id="trl/digits-v0",
            entry_point="rolloutgym_trl.envs:DigitsEnv",
            tasks="rolloutgym_trl.envs:digits_tasks",
            description=(
                "Reply with a number, digits only. Reward: the share of the reply's characters that are digits "
                "(partial credit from the first step); passes when the reply is all digits. A training demo: "
                "GRPO on a small model learns it in minutes on a CPU ('rolloutgym train grpo trl/digits-v0')."
            ),
            tags=("training-demo", "single-turn", "text"),
            splits=("train", "dev", "test"),
            max_steps=1,
            replayable=True,
            forkable=True,
        ),
        EnvSpec(
            id="trl/sums-v0",
            entry_point="rolloutgym_trl.envs:SumsEnv",
            tasks="rolloutgym_trl.envs:sums_tasks",
            description=(
                "Add two integers (a third each of 1+1, 2+1 and 2+2 digit sums; 200 train, 100 test tasks). "
                "Reward 1 when the reply's last integer is the sum and no other number is offered. Sized so "
                "that SmolLM2-135M starts between 10% and 60% and GRPO can move it (benchmarks/train_real.py)."
            ),
            tags=("training-demo", "single-turn", "text", "math"),
            splits=("train", "test"),
            max_steps=1,
            replayable=True,
            forkable=True,
        ),
    ]


@hookimpl
def rolloutgym_commands(cli: Any) -> None:
    """Add ``rolloutgym train sft|dpo|grpo`` (the command module imports nothing heavy either)."""
    from .cli import register

    register(cli)
