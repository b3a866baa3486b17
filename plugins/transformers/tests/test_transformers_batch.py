"""Batched generation with hf:tiny, and run_multi_turn_rollout over a mixed batch of envs.

The model runs in float64 here so that padded batches and single requests agree to
rounding noise (greedy decoding picks the same tokens; logprobs match to 1e-9): a batch
must not change what a sample would have been alone.
"""

from __future__ import annotations

import asyncio
from typing import Any

import gymnasium as gym
import pytest
import rolloutgym as rg
from rolloutgym import Score, spaces
from rolloutgym.llm import SamplingParams, TokenPolicy, check_provenance, run_multi_turn_rollout
from rolloutgym.rollouts import arollout
from rolloutgym_transformers import TransformersBatchSampler, make_batch_sampler, make_policy


@pytest.fixture(scope="module")
def policy() -> Any:
    return make_policy("tiny", dtype="float64", max_tokens=12)


def prompts(policy: Any) -> list[list[int]]:
    render = policy.renderer.render_prompt
    return [render([{"role": "user", "content": "word " * count}], []) for count in (1, 9, 4, 9, 20)]


def test_a_padded_batch_samples_what_each_prompt_samples_alone(policy: Any) -> None:
    batcher = policy.sampler.batch_sampler(policy.renderer)
    assert isinstance(batcher, TransformersBatchSampler) and batcher.renderer is policy.renderer
    contexts = prompts(policy)
    assert len({len(context) for context in contexts}) == 4  # mixed lengths: padding is exercised
    for params in (
        [SamplingParams(max_tokens=4 + index, temperature=0.0) for index in range(5)],
        [SamplingParams(max_tokens=10, temperature=1.0, top_p=0.9, seed=40 + index) for index in range(5)],
    ):
        batched = batcher.generate(contexts, params)
        for context, item, sample in zip(contexts, params, batched, strict=True):
            single = policy.sampler.sample_sync(context, item)
            assert sample.token_ids == single.token_ids and sample.stop_reason == single.stop_reason
            assert sample.logprobs == pytest.approx(single.logprobs, abs=1e-9)
            assert sample.prompt_token_ids == tuple(context)
        if params[0].greedy:  # no stop tokens given: every row runs to its own max_tokens
            assert [len(sample.token_ids) for sample in batched] == [4, 5, 6, 7, 8]
    assert batcher.batch_sizes == [5, 5]


def test_rows_stop_on_their_own_stop_tokens_and_strings(policy: Any) -> None:
    batcher = policy.sampler.batch_sampler(policy.renderer)
    contexts = prompts(policy)[:3]
    free = batcher.generate(contexts, [SamplingParams(max_tokens=10, temperature=0.0)] * 3)
    stop_token = free[0].token_ids[2]
    text = policy.renderer.tokenizer.decode(list(free[1].token_ids[:5]), skip_special_tokens=False)
    stop_text = text[-2:]
    params = [
        SamplingParams(max_tokens=10, temperature=0.0, stop_token_ids=(stop_token,)),
        SamplingParams(max_tokens=10, temperature=0.0, stop=(stop_text,)),
        SamplingParams(max_tokens=3, temperature=0.0),
    ]
    stopped = batcher.generate(contexts, params)
    first = free[0].token_ids.index(stop_token)
    assert stopped[0].token_ids == free[0].token_ids[: first + 1] and stopped[0].stop_reason == "stop"
    assert stopped[1].stop_reason == "stop" and len(stopped[1].token_ids) <= 5
    assert stop_text in policy.renderer.tokenizer.decode(list(stopped[1].token_ids), skip_special_tokens=False)
    assert stopped[2].token_ids == free[2].token_ids[:3] and stopped[2].stop_reason == "length"
    with pytest.raises(ValueError, match="empty prompt"):
        batcher.generate([[]], [SamplingParams()])


class ChatterEnv(gym.Env[list[dict[str, Any]], dict[str, Any]]):
    """A chat env that always lasts three assistant turns, whatever the model says."""

    metadata = {"render_modes": [], "nonblocking": True}

    def __init__(self, task: int) -> None:
        self.task = task
        self.observation_space = spaces.messages.chat()
        self.action_space = spaces.messages.message(roles=("assistant",))
        self.turns = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.turns = 0
        return [{"role": "user", "content": f"Say something ({self.task})."}], {}

    def step(self, action: dict[str, Any]) -> Any:
        self.turns += 1
        if self.turns < 3:
            return [{"role": "user", "content": "Go on."}], 0.0, False, False, {}
        score = Score(0.25, {"talked": 1.0, "short": float(len(action["content"]) < 40)})
        return [], score.value, True, False, {"score": score.to_dict()}


def test_a_mixed_batch_with_hf_tiny_matches_the_episodes_run_alone(policy: Any) -> None:
    pytest.importorskip("rolloutgym_workflow", reason="workflow/refund-v0 comes from rolloutgym-workflow")
    task_to_env = {"guess": "toy/guess-v0", "arith": "toy/arith-v0", "refund": "workflow/refund-v0", "chat": ChatterEnv}
    samples = [
        {"task_name": "refund", "task": 0, "row": 0},
        {"task_name": "guess", "task": 1, "row": 1},
        {"task_name": "chat", "task": 7, "row": 2},
        {"task_name": "arith", "task": 3, "row": 3},
        {"task_name": "chat", "task": 8, "row": 4},
        {"task_name": "guess", "task": "guess-05", "row": 5},
    ]
    batch, metrics = run_multi_turn_rollout(
        policy, samples, task_to_env, max_seq_len=4096, max_rollout_turns=4, greedy=True
    )
    assert batch["row"] == [0, 1, 2, 3, 4, 5] and batch["env_id"][0] == "workflow/refund-v0"
    # the chat samples last three turns; the others end after one (hf:tiny is random)
    assert batch["turn_count"] == [1, 1, 3, 1, 3, 1]
    assert metrics["generation_calls"] == 3 and metrics["wave_sizes"] == [6, 2, 2]
    assert metrics["retokenization_mismatches"] == 0
    alone_policy = TokenPolicy(
        policy.sampler, policy.renderer, max_tokens=12, max_seq_len=4096, max_turns=4, greedy=True
    )
    for index, sample in enumerate(samples):
        source = task_to_env[sample["task_name"]]
        environment = rg.make(source, task=sample["task"]) if isinstance(source, str) else source(sample["task"])
        expected = asyncio.run(arollout(environment, alone_policy, max_steps=5))
        environment.close()
        trajectory = batch.trajectories[index]
        assert check_provenance(trajectory) == 0
        assert [step.policy_tokens for step in trajectory.steps] == [step.policy_tokens for step in expected.steps]
        assert batch["total_reward"][index] == expected.total_reward
        assert batch["stop_reason"][index] == expected.stop_reason
        for name, value in expected.score.component_values.items():
            assert batch[f"reward/{name}"][index] == value
        length = batch["input_lengths"][index]
        observed = [token for step in expected.steps for token in (*step.observation_tokens, *step.policy_tokens)]
        mask = [
            flag
            for step in expected.steps
            for flag in [0] * len(step.observation_tokens) + [1] * len(step.policy_tokens)
        ]
        assert batch["input_ids"][index][:length] == observed
        assert batch["loss_mask"][index][:length] == mask
        logprobs = [
            value
            for step in expected.steps
            for value in [0.0] * len(step.observation_tokens) + list(step.policy_logprobs)
        ]
        assert batch["generation_logprobs"][index][:length] == pytest.approx(logprobs, abs=1e-9)
    assert "reward/state" in batch and "reward/found" in batch and "reward/talked" in batch
    assert batch["reward/talked"] == [None, None, 1.0, None, 1.0, None]
    assert metrics["histogram/gen_tokens_length"] == [
        len(step.policy_tokens) for trajectory in batch.trajectories for step in trajectory.steps if step.policy_tokens
    ]
    assert metrics["task/chat/mean_total_reward"] == 0.25


def test_make_batch_sampler_refuses_sampling_options() -> None:
    assert isinstance(make_batch_sampler("tiny"), TransformersBatchSampler)
    with pytest.raises(rg.errors.ConfigError, match="sampling options go to run_multi_turn_rollout"):
        make_batch_sampler("tiny", temperature=0.5)
