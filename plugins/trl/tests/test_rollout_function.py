"""The rollout_func side: episodes become TRL's prompt ids, completion ids, env mask, logprobs.

Token level checks use rolloutgym's own loop with ``ScriptedSampler`` + ``CharRenderer``
(one token per character), so every position can be asserted; the GRPOTrainer runs in
``test_grpo_signal.py`` use the real model.
"""

from __future__ import annotations

import json

import pytest
import rolloutgym as rg
from rolloutgym.llm import CharRenderer, ScriptedSampler, TokenPolicy
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_trl import env_reward, episode_tensors, train_dataset
from rolloutgym_trl.datasets import TASK_KEY, split_task_key, task_rows


def _guess_call(number: int) -> str:
    return "<tool_call>" + json.dumps({"name": "guess", "arguments": {"number": number}}) + "</tool_call>"


def test_multi_turn_episode_masks_the_env_tokens() -> None:
    renderer = CharRenderer()
    task = next(task for task in rg.get_registry().tasks("toy/guess-v0") if task.target != 1)
    replies = [_guess_call(1), _guess_call(task.target)]
    policy = TokenPolicy(
        ScriptedSampler(renderer.encode, replies, end_token_id=CharRenderer.END, logprob=-0.25), renderer
    )
    trajectory = rg.rollout(rg.make("toy/guess-v0", task=task.id), policy)
    assert trajectory.total_reward == 1.0 and len(trajectory.steps) == 2

    fields = episode_tensors(trajectory, pad_token_id=99)
    first, second = trajectory.steps
    assert fields["prompt_ids"] == list(first.observation_tokens)
    expected = list(first.policy_tokens) + list(second.observation_tokens) + list(second.policy_tokens)
    assert fields["completion_ids"] == expected
    mask = fields["env_mask"]
    assert mask == [1] * len(first.policy_tokens) + [0] * len(second.observation_tokens) + [1] * len(
        second.policy_tokens
    )
    # the env's reply ("higher") sits in the masked span, the model's calls in the trained spans
    env_text = renderer.decode([token for token, keep in zip(expected, mask, strict=True) if not keep])
    assert "higher" in env_text and "guess" not in env_text
    logprobs = fields["logprobs"]
    assert [value for value, keep in zip(logprobs, mask, strict=True) if keep] == [-0.25] * sum(mask)
    assert all(value == 0.0 for value, keep in zip(logprobs, mask, strict=True) if not keep)


def test_an_episode_without_sampled_tokens_gets_one_masked_pad() -> None:
    trajectory = rg.rollout(rg.make("toy/arith-v0"), rg.make_policy("null"))  # a non-LLM policy records no tokens
    fields = episode_tensors(trajectory, pad_token_id=7)
    assert fields == {"prompt_ids": [7], "completion_ids": [7], "env_mask": [0], "logprobs": [0.0]}


def test_dataset_rows_name_their_task_and_hold_the_first_observation() -> None:
    rows = task_rows(["trl/digits-v0", "toy/arith-v0"], split="test")
    assert {row["env_id"] for row in rows} == {"trl/digits-v0", "toy/arith-v0"}
    row = rows[0]
    assert split_task_key(row["prompt"][-1][TASK_KEY]) == (row["env_id"], row["task_id"])
    assert "digits only" in row["prompt"][-1]["content"]
    dataset = train_dataset("trl/digits-v0")
    assert len(dataset) == 24 and set(dataset.column_names) == {"prompt", "env_id", "task_id"}


def test_unknown_split_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="split 'nope'"):
        task_rows("trl/digits-v0", split="nope")


def test_env_reward_passes_scores_through_and_logs_the_pass_rate() -> None:
    logged = {}
    rewards = env_reward(
        prompts=[[], [], []],
        completions=["", "", ""],
        env_reward=[1.0, 0.25, None],
        env_passed=[True, False, None],
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    assert rewards == [1.0, 0.25, None]  # a failed episode is left out of the group baseline
    assert logged == {"rolloutgym/pass_rate": 0.5}


def test_env_reward_without_the_rollout_function_says_what_to_do() -> None:
    with pytest.raises(ConfigError, match="rollout_func"):
        env_reward(prompts=[[]], completions=[""])
