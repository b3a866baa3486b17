"""Signal, not noise: the rollout function's batching, group resampling and dropping, and the figures.

The rollout function runs on the real ``hf:tiny`` model and real envs. The trainer it is
called with is a plain holder of the attributes ``GRPOTrainer`` hands a ``rollout_func``
(``model``, ``processing_class``, ``args``, ``accelerator.unwrap_model``,
``train_dataset``); the full GRPOTrainer runs are in ``test_grpo_signal.py``.

``hf:tiny`` never answers ``toy/arith-v0`` (every group all 0: no gradient) and always
earns a varying partial credit on ``trl/digits-v0`` (every group has a reward spread), so
the tests know which groups must be replaced, dropped or kept.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from rolloutgym_trl import RolloutFunction, env_reward, train_dataset
from rolloutgym_trl.datasets import TASK_KEY
from rolloutgym_trl.stats import group_signal, has_spread, paired_change


@pytest.fixture(scope="module")
def trainer():
    from rolloutgym_trl._models import load_trainable

    trainable = load_trainable("hf:tiny")
    trainable.model.eval()
    dataset = train_dataset(["toy/arith-v0", "trl/digits-v0"], split="train")
    return SimpleNamespace(
        model=trainable.model,
        processing_class=trainable.tokenizer,
        args=SimpleNamespace(max_completion_length=6, temperature=1.0, top_p=1.0),
        accelerator=SimpleNamespace(unwrap_model=lambda model: model, device="cpu"),
        train_dataset=dataset,
        use_vllm=False,
    )


def _arith_prompts(trainer, tasks: int, generations: int) -> list:
    rows = [row for row in trainer.train_dataset if row["env_id"] == "toy/arith-v0"][:tasks]
    return [row["prompt"] for row in rows for _ in range(generations)]


def test_flat_groups_are_replaced_by_other_tasks_groups_with_a_reward_spread(trainer) -> None:
    pool = [row["prompt"][-1][TASK_KEY] for row in trainer.train_dataset if row["env_id"] == "trl/digits-v0"]
    rollout = RolloutFunction(max_tokens=6, seed=0, tasks=pool)
    output = rollout(_arith_prompts(trainer, 2, 4), trainer)
    assert len(output["prompt_ids"]) == 8 and len(output["env_reward"]) == 8
    # both arith groups were flat (all 0); each was replaced by a digits group with a reward spread
    keys = [group.key for group in rollout.last_groups]
    assert all(key.startswith("trl/digits-v0#") for key in keys), keys
    assert all(has_spread(group.rewards) for group in rollout.last_groups)
    stats = rollout.last_stats
    assert stats["rolloutgym/groups_with_spread_first_draw"] == 0.0
    assert stats["rolloutgym/groups_with_spread"] == 1.0
    assert stats["rolloutgym/resampled_groups"] == 2.0 and stats["rolloutgym/dropped_groups"] == 0.0
    assert stats["rolloutgym/advantage_abs"] > 0.5
    # the replacement rows are the digits episodes, trained on (mask 1 on sampled tokens)
    decoded = trainer.processing_class.decode(output["prompt_ids"][0])
    assert "digits only" in decoded and all(any(mask) for mask in output["env_mask"])
    # running pass rates: every played group is remembered (flat tasks are not drawn as replacements)
    arith = [key for key in rollout.reward_history if key.startswith("toy/arith-v0#")]
    assert len(arith) == 2 and all(list(rollout.reward_history[key]) == [0.0] * 4 for key in arith)
    candidates = rollout._replacements(sorted(rollout.reward_history), set(), 10)
    assert candidates and all(key.startswith("trl/digits-v0#") for key in candidates), candidates
    # env_reward logs the call's figures through TRL's log_metric
    logged: dict = {}
    rows = len(output["env_reward"])
    env_reward(
        prompts=[[]] * rows,
        completions=[""] * rows,
        env_reward=output["env_reward"],
        env_passed=output["env_passed"],
        env_stats=[output["env_stats"]] * rows,
        log_metric=logged.__setitem__,
    )
    assert logged["rolloutgym/resampled_groups"] == 2.0 and "rolloutgym/group_reward_std" in logged


def test_drop_masks_flat_groups_out_of_the_loss_and_off_keeps_them(trainer) -> None:
    prompts = _arith_prompts(trainer, 2, 3)
    dropped = RolloutFunction(max_tokens=6, seed=0, dynamic_sampling="drop")(prompts, trainer)
    assert all(not any(mask) for mask in dropped["env_mask"])  # no token of a flat group in the loss
    assert dropped["env_stats"]["rolloutgym/dropped_groups"] == 2.0
    assert dropped["env_stats"]["rolloutgym/resampled_groups"] == 0.0
    kept = RolloutFunction(max_tokens=6, seed=0, dynamic_sampling="off")(prompts, trainer)
    assert all(any(mask) for mask in kept["env_mask"])
    assert kept["env_stats"]["rolloutgym/dropped_groups"] == 0.0


def test_a_step_is_one_batched_generate_call_per_wave(trainer) -> None:
    rows = [row for row in trainer.train_dataset if row["env_id"] == "trl/digits-v0"][:2]
    prompts = [row["prompt"] for row in rows for _ in range(4)]
    rollout = RolloutFunction(max_tokens=6, seed=0, dynamic_sampling="off")
    output = rollout(prompts, trainer)
    assert rollout._sampler.batch_sizes == [8]  # 8 single-turn episodes: one wave, one batched call
    assert [group.key for group in rollout.last_groups] == [row["prompt"][-1][TASK_KEY] for row in rows]
    assert all(0 < sum(mask) <= 6 for mask in output["env_mask"])
    # seeded per call: the same call on a fresh function gives the same tokens; the next call other ones
    again = RolloutFunction(max_tokens=6, seed=0, dynamic_sampling="off")(prompts, trainer)
    assert again["completion_ids"] == output["completion_ids"]
    assert rollout(prompts, trainer)["completion_ids"] != output["completion_ids"]


def test_bad_dynamic_sampling_is_a_clear_error() -> None:
    from rolloutgym_protocol.errors import ConfigError

    with pytest.raises(ConfigError, match="resample, drop, off"):
        RolloutFunction(dynamic_sampling="sometimes")


def test_group_signal_counts_groups_with_spread_and_the_advantage_magnitude() -> None:
    signal = group_signal([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, None, 1.0, 1.0]])
    assert signal.groups == 3 and signal.groups_with_spread == 1
    assert signal.spread_fraction == pytest.approx(1 / 3)
    # the spread group: std 0.577, |r - mean| 0.5 each -> 0.866; the flat groups: 0
    assert signal.advantage_abs == pytest.approx((4 * 0.5 / (0.57735 + 1e-4)) / 11, rel=1e-3)


def test_paired_change_says_whether_a_rise_is_outside_noise() -> None:
    before = {f"t{index}": 0.0 for index in range(20)}
    noisy = paired_change(before, {**before, "t0": 1.0})  # one task of 20 moved
    assert noisy is not None and not noisy.outside_noise and "inside noise" in noisy.line()
    risen = paired_change(before, {key: (1.0 if index % 2 else 0.5) for index, key in enumerate(before)})
    assert risen is not None and risen.outside_noise and risen.delta == pytest.approx(0.75)
    assert "outside noise" in risen.line() and "20 tasks" in risen.line()
    assert paired_change({"a": 1.0}, {"b": 1.0}) is None
