"""Proof that rewards teach: GRPO through the TRL integration raises the env's reward.

TRL's own ``GRPOTrainer`` trains ``hf:tiny`` (a random 2-layer Llama built in code) on
``trl/digits-v0`` through :class:`rolloutgym_trl.RolloutFunction` (rolloutgym's token loop
samples every episode from the model being trained). The random model starts near 0.06
mean reward (a few digit tokens by chance) and must reach 0.8 or more; the before/after
evaluation on the test split must show the same. Seeded: two runs give the same curve.
The long version, with wall time per step, is ``benchmarks/train_signal.py``.
"""

from __future__ import annotations

import json
import statistics

import pytest
from rolloutgym_trl import train_grpo

SETTINGS = {
    "max_tokens": 8,
    "learning_rate": 1e-2,
    "num_generations": 8,
    "prompts_per_step": 2,
    "seed": 0,
    "threads": 1,
    "trainer_overrides": {"lr_scheduler_type": "constant"},
}


@pytest.mark.slow
def test_grpo_raises_mean_reward_from_below_0_2_to_above_0_8(tmp_path) -> None:
    result = train_grpo("trl/digits-v0", "hf:tiny", out=tmp_path / "model", steps=25, eval_rollouts=2, **SETTINGS)
    curve = result.curve("reward")
    assert len(curve) == 25
    assert statistics.mean(curve[:3]) <= 0.2, curve
    assert statistics.mean(curve[-5:]) >= 0.8, curve
    assert result.curve("rolloutgym/pass_rate")[-1] > 0.5  # most replies are now all digits
    comparison = result.comparison
    assert comparison is not None
    assert comparison.before.mean_reward <= 0.2
    assert comparison.after.mean_reward >= 0.8
    assert comparison.after.pass_rate > comparison.before.pass_rate
    assert comparison.after.num_trajectories == 16  # 8 test tasks x 2 episodes
    # the saved model is a plain checkpoint that '--policy hf:PATH' loads
    assert (tmp_path / "model" / "config.json").is_file()
    # the training log: a header, one line per step with reward/loss, the end and the evaluation
    lines = [json.loads(line) for line in result.log_path.read_text().splitlines()]
    assert lines[0]["rolloutgym_training_log"] == 1 and lines[0]["env_ids"] == ["trl/digits-v0"]
    steps = [line for line in lines[1:] if "reward" in line and "loss" in line]
    assert [line["step"] for line in steps] == list(range(1, 26))
    assert lines[-1]["event"] == "evaluation"


@pytest.mark.slow
def test_grpo_is_repeatable_with_a_seed(tmp_path) -> None:
    first = train_grpo("trl/digits-v0", "hf:tiny", out=tmp_path / "a", steps=4, evaluate=False, **SETTINGS)
    second = train_grpo("trl/digits-v0", "hf:tiny", out=tmp_path / "b", steps=4, evaluate=False, **SETTINGS)
    assert first.curve("reward") == second.curve("reward")
    assert first.curve("loss") == second.curve("loss")


@pytest.mark.slow
def test_lora_training_saves_a_merged_model_and_the_curves_render(tmp_path) -> None:
    from rolloutgym_trl import build_curves_report

    result = train_grpo(
        "trl/digits-v0",
        "hf:tiny",
        out=tmp_path / "lora",
        steps=2,
        evaluate=False,
        lora={"r": 4, "lora_alpha": 8},
        **SETTINGS,
    )
    config = json.loads((tmp_path / "lora" / "config.json").read_text())
    assert config["model_type"] == "llama"  # plain weights: --policy hf:PATH needs no peft
    assert not (tmp_path / "lora" / "adapter_config.json").exists()
    page = build_curves_report([result.log_path], tmp_path / "curves.html").read_text()
    assert page.count("<svg") >= 3 and "mean reward" in page
