"""VLLMBatchSampler: one ``LLM.generate`` call per wave of run_multi_turn_rollout.

vLLM needs a CUDA GPU and cannot be installed here, so ``rolloutgym_vllm.testing.StandInLLM``
(``LLM.generate``'s documented signature, ``RequestOutput``-shaped results, scripted token
ids) takes the place of ``vllm.LLM``; ``benchmarks/gpu/vllm_check.py`` runs the real engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from rolloutgym.errors import PolicyError
from rolloutgym.llm import ChatTemplateRenderer, TokenPolicy, as_batch_sampler, run_multi_turn_rollout
from rolloutgym_vllm import VLLMBatchSampler, VLLMEngineSampler
from rolloutgym_vllm.testing import StandInLLM, byte_tokenizer

TOKENIZER = byte_tokenizer()
END = TOKENIZER.convert_tokens_to_ids("<|im_end|>")
TASKS = {"guess": "toy/guess-v0", "arith": "toy/arith-v0"}


def encode(text: str) -> list[int]:
    return TOKENIZER.encode(text, add_special_tokens=False)


def reply(prompt: Sequence[int], params: Any) -> list[int]:
    """Arithmetic questions get '41'; the guessing game gets guesses until its third turn."""
    text = TOKENIZER.decode(list(prompt))
    if "What is" in text:
        return encode("41") + [END]
    if text.count("<tool_response>") >= 2:
        return encode("I give up.") + [END]
    return encode('<tool_call>\n{"name": "guess", "arguments": {"number": 3}}\n</tool_call>') + [END]


def samples() -> list[dict[str, Any]]:
    return [
        {"task_name": "guess", "task": 0, "id": 10},
        {"task_name": "arith", "task": 1, "id": 11},
        {"task_name": "guess", "task": 2, "id": 12},
    ]


def test_each_wave_is_one_generate_call_with_token_prompts() -> None:
    llm = StandInLLM(reply, tokenizer=TOKENIZER)
    generation = VLLMBatchSampler(llm=llm, sampling_params_class=dict)
    batch, metrics = run_multi_turn_rollout(
        generation, samples(), TASKS, max_seq_len=2048, max_rollout_turns=5, max_tokens=64, seed=100
    )
    assert llm.calls == generation.batch_sizes == metrics["wave_sizes"] == [3, 2, 2]
    assert batch["id"] == [10, 11, 12] and batch["turn_count"] == [3, 1, 3]
    assert batch["reward/found"] == [0.0, None, 0.0] and batch["reward/formatted"] == [None, 1.0, None]
    assert metrics["retokenization_mismatches"] == 0
    last = llm.params  # the third wave: samples 0 and 2, turn 2
    assert [item["seed"] for item in last] == [100 + 2, 100 + 2000 + 2]
    assert all(item["logprobs"] == 0 and item["skip_special_tokens"] is False for item in last)
    assert all(item["include_stop_str_in_output"] and END in item["stop_token_ids"] for item in last)
    for index, trajectory in enumerate(batch.trajectories):
        sampled = [token for step in trajectory.steps for token in step.policy_tokens or ()]
        length = batch["input_lengths"][index]
        logprobs = batch["generation_logprobs"][index][:length]
        mask = batch["loss_mask"][index][:length]
        assert [value for value, flag in zip(logprobs, mask, strict=True) if flag] == [-0.5] * len(sampled)


def test_a_token_policy_over_the_engine_batches_through_the_same_engine() -> None:
    llm = StandInLLM(reply, tokenizer=TOKENIZER)
    engine = VLLMEngineSampler(llm=llm, sampling_params_class=dict)
    policy = TokenPolicy(engine, ChatTemplateRenderer(TOKENIZER), max_tokens=64)
    generation = as_batch_sampler(policy)
    assert isinstance(generation, VLLMBatchSampler) and generation.llm is llm
    batch, _ = run_multi_turn_rollout(policy, samples()[:2], TASKS, max_seq_len=2048, max_rollout_turns=2)
    assert llm.calls == [2, 1] and batch["stop_reason"] == ["max_turns", "terminated"]


def test_an_engine_failure_fails_the_call() -> None:
    generation = VLLMBatchSampler(llm=StandInLLM(reply, fail=True, tokenizer=TOKENIZER), sampling_params_class=dict)
    with pytest.raises(PolicyError, match=r"VLLMBatchSampler failed in wave 0 \(3 prompts\).*CUDA out of memory"):
        run_multi_turn_rollout(generation, samples(), TASKS, max_seq_len=2048, max_rollout_turns=2)
