"""The offline-engine sampler without a GPU: batching, output parsing and errors.

vLLM itself needs a GPU, so ``rolloutgym_vllm.testing.StandInLLM`` takes the place of ``vllm.LLM`` (the
third-party engine, not our code): it has ``LLM.generate``'s signature and returns objects
shaped like ``vllm.RequestOutput``. ``benchmarks/gpu/vllm_check.py`` runs the real engine.
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest
from rolloutgym.llm import ChatTemplateRenderer, SamplingParams, TokenPolicy, check_provenance
from rolloutgym.registry import get_registry
from rolloutgym.rollouts import arollout_group, rollout
from rolloutgym_protocol.errors import PolicyError
from rolloutgym_vllm import VLLMEngineSampler, make_policy
from rolloutgym_vllm.testing import StandInLLM, byte_tokenizer

TOKENIZER = byte_tokenizer()
END = TOKENIZER.convert_tokens_to_ids("<|im_end|>")


def engine(reply: list[int], **options: Any) -> VLLMEngineSampler:
    llm = StandInLLM(reply, fail=options.pop("fail", False), tokenizer=TOKENIZER)
    return VLLMEngineSampler(llm=llm, sampling_params_class=dict, **options)


def test_concurrent_requests_are_batched() -> None:
    sampler = engine([5, 6, END], batch_wait=0.05)

    async def go() -> list[Any]:
        return await asyncio.gather(
            *(sampler.sample([1, 2, index], SamplingParams(max_tokens=8)) for index in range(8))
        )

    samples = asyncio.run(go())
    assert sampler.llm.calls == [8]
    assert [sample.prompt_token_ids for sample in samples] == [(1, 2, index) for index in range(8)]
    assert all(sample.token_ids == (5, 6, END) and sample.logprobs == (-0.5, -0.5, -0.5) for sample in samples)


def test_max_tokens_gives_length_stop() -> None:
    sample = asyncio.run(engine([5, 6, 7, END]).sample([1], SamplingParams(max_tokens=2)))
    assert sample.token_ids == (5, 6) and sample.stop_reason == "length"


def test_engine_failure_is_a_policy_error_for_every_waiting_episode() -> None:
    sampler = engine([5], fail=True, batch_wait=0.02)

    async def go() -> list[Any]:
        return await asyncio.gather(*(sampler.sample([1], SamplingParams()) for _ in range(3)), return_exceptions=True)

    errors = asyncio.run(go())
    assert all(isinstance(error, PolicyError) and "CUDA out of memory" in str(error) for error in errors)


def test_token_policy_over_the_engine_is_token_exact() -> None:
    sampler = engine(TOKENIZER.encode("41", add_special_tokens=False) + [END])
    policy = TokenPolicy(sampler, ChatTemplateRenderer(TOKENIZER), max_tokens=16)

    async def go() -> Any:
        return await arollout_group(
            0, lambda task: get_registry().make("toy/arith-v0", task=task), policy, num_rollouts=6, concurrency=6
        )

    group = asyncio.run(go())
    assert not group.errors
    assert sampler.llm.calls == [6]  # six episodes, one generate() call
    for trajectory in group.trajectories:
        assert trajectory.steps[0].action == "41"
        assert check_provenance(trajectory) == 0


def test_sync_rollout_over_the_engine() -> None:
    sampler = engine(TOKENIZER.encode("3", add_special_tokens=False) + [END])
    policy = TokenPolicy(sampler, ChatTemplateRenderer(TOKENIZER))
    environment = get_registry().make("toy/arith-v0", task=0)
    try:
        trajectory = rollout(environment, policy, seed=0)  # each step runs its own event loop
    finally:
        environment.close()
    assert trajectory.steps[0].policy_tokens == tuple(TOKENIZER.encode("3", add_special_tokens=False) + [END])


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_offline_engine_without_vllm_says_what_to_do() -> None:
    with pytest.raises(PolicyError, match=r"pip install '\S*plugins/vllm\[engine\]'.*--base-url"):
        make_policy("Qwen/Qwen3-0.6B")
