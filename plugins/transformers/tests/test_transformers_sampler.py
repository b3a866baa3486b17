"""The transformers sampler: exact tokens, logprobs from the raw logits, stops and seeds."""

from __future__ import annotations

import asyncio

import pytest
import torch
from rolloutgym.llm import SamplingParams
from rolloutgym_transformers import TransformersSampler, load_model


@pytest.fixture(scope="module")
def tiny():
    loaded = load_model("tiny", device="cpu")
    return loaded, TransformersSampler(loaded.model, loaded.tokenizer, device="cpu")


def prompt(loaded) -> list[int]:
    return loaded.tokenizer.encode(
        "<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False
    )


def test_logprobs_are_those_of_the_raw_logits(tiny) -> None:
    loaded, sampler = tiny
    context = prompt(loaded)
    sample = sampler.sample_sync(context, SamplingParams(max_tokens=12, temperature=1.3, seed=5))
    assert len(sample.token_ids) == len(sample.logprobs) == 12 and sample.stop_reason == "length"
    assert sample.prompt_token_ids == tuple(context)
    # One forward pass over prompt + sample gives the same per-token logprobs.
    full = torch.tensor([context + list(sample.token_ids)])
    with torch.inference_mode():
        logits = loaded.model(input_ids=full).logits[0].float()
    expected = torch.log_softmax(logits[len(context) - 1 : -1], dim=-1).gather(
        1, torch.tensor(sample.token_ids)[:, None]
    )[:, 0]
    assert torch.allclose(torch.tensor(sample.logprobs), expected, atol=1e-4)


def test_greedy_is_deterministic_and_seeds_reproduce(tiny) -> None:
    loaded, sampler = tiny
    context = prompt(loaded)
    greedy = SamplingParams(max_tokens=8, temperature=0.0)
    assert sampler.sample_sync(context, greedy).token_ids == sampler.sample_sync(context, greedy).token_ids
    seeded = SamplingParams(max_tokens=8, temperature=1.0, seed=11)
    assert sampler.sample_sync(context, seeded).token_ids == sampler.sample_sync(context, seeded).token_ids
    narrow = SamplingParams(max_tokens=8, temperature=1.0, top_p=1e-6, seed=3)
    assert sampler.sample_sync(context, narrow).token_ids == sampler.sample_sync(context, greedy).token_ids


def test_stop_tokens_and_stop_strings_end_the_sample_after_the_stopping_token(tiny) -> None:
    loaded, sampler = tiny
    context = prompt(loaded)
    free = sampler.sample_sync(context, SamplingParams(max_tokens=10, temperature=0.0))
    stop_token = free.token_ids[3]
    stopped = sampler.sample_sync(context, SamplingParams(max_tokens=10, temperature=0.0, stop_token_ids=(stop_token,)))
    first = free.token_ids.index(stop_token)
    assert stopped.token_ids == free.token_ids[: first + 1] and stopped.stop_reason == "stop"
    text = loaded.tokenizer.decode(list(free.token_ids[:6]), skip_special_tokens=False)
    stop_string = text[-2:]
    by_string = sampler.sample_sync(context, SamplingParams(max_tokens=10, temperature=0.0, stop=(stop_string,)))
    decoded = loaded.tokenizer.decode(list(by_string.token_ids), skip_special_tokens=False)
    assert stop_string in decoded and stop_string not in loaded.tokenizer.decode(
        list(by_string.token_ids[:-1]), skip_special_tokens=False
    )
    assert by_string.stop_reason == "stop" and by_string.token_ids == free.token_ids[: len(by_string.token_ids)]


def test_async_samples_run_concurrently_without_corrupting_each_other(tiny) -> None:
    loaded, sampler = tiny
    context = prompt(loaded)
    params = SamplingParams(max_tokens=6, temperature=0.0)

    async def many():
        return await asyncio.gather(*(sampler.sample(context, params) for _ in range(4)))

    results = asyncio.run(many())
    assert len({result.token_ids for result in results}) == 1


def test_empty_prompt_is_refused(tiny) -> None:
    _, sampler = tiny
    with pytest.raises(ValueError, match="empty prompt"):
        sampler.sample_sync([], SamplingParams())


@pytest.mark.parametrize(("threaded", "elsewhere"), [(None, False), (False, False), (True, True)])
def test_sample_runs_where_threaded_says_with_the_same_result(tiny, threaded, elsewhere) -> None:
    """On CPU the default samples on the calling thread (a worker thread ran torch slower here)."""
    import threading

    loaded, reference = tiny
    sampler = TransformersSampler(loaded.model, loaded.tokenizer, device="cpu", threaded=threaded)
    assert sampler.threaded is elsewhere
    seen: list[int] = []
    original = sampler._sample

    def recording(*arguments):
        seen.append(threading.get_ident())
        return original(*arguments)

    sampler._sample = recording  # type: ignore[method-assign]
    params = SamplingParams(max_tokens=6, temperature=1.0, seed=11)
    sample = asyncio.run(sampler.sample(prompt(loaded), params))
    assert (seen[0] != threading.get_ident()) is elsewhere
    assert sample.token_ids == reference.sample_sync(prompt(loaded), params).token_ids
