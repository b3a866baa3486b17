"""Batched generation: what :func:`~rolloutgym.llm.run_multi_turn_rollout` calls once per wave.

A :class:`BatchSampler` takes the prompts of every still-active sample of a batch (token
ids) and returns one :class:`~rolloutgym.llm.Sample` per prompt, in order: the sampled
token ids verbatim, one logprob per token, the stop reason and (for the provenance
check) the prompt the backend conditioned on. It also carries the :class:`Renderer` of
its model, so the loop can turn chat messages into that model's tokens.

Adapters:

* ``rolloutgym_transformers.TransformersBatchSampler`` — a local ``hf:`` model, one padded
  forward pass per decoding step for the whole wave;
* ``rolloutgym_vllm.VLLMBatchSampler`` — vLLM's offline engine, one ``LLM.generate`` call
  per wave;
* :class:`ConcurrentBatchSampler` — any per-request :class:`~rolloutgym.llm.Sampler`
  (a vLLM or other OpenAI-compatible server, Tinker): the wave's requests are sent
  concurrently.

:func:`as_batch_sampler` accepts any of these, or a :class:`~rolloutgym.llm.TokenPolicy`
(``rolloutgym.make_policy("hf:tiny")``): its sampler's batched form when the sampler has
one (``sampler.batch_sampler(renderer)``), else the concurrent wrapper.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol, runtime_checkable

from rolloutgym_protocol.errors import ConfigError

from .renderers import Renderer
from .sampling import Sample, Sampler, SamplingParams
from .token_policy import TokenPolicy

__all__ = ["BatchSampler", "ConcurrentBatchSampler", "as_batch_sampler"]


@runtime_checkable
class BatchSampler(Protocol):
    """A model backend that samples one continuation for each prompt of a batch.

    Attributes:
        renderer: chat messages -> this model's token ids.

    ``generate`` may be a plain method (the loop runs it in a worker thread, so the
    event loop stays free) or a coroutine function. It must return exactly one
    :class:`~rolloutgym.llm.Sample` per prompt, in the order of ``prompts``; the rules of
    :class:`~rolloutgym.llm.Sampler` hold per row (stop after a stop token id or the token
    completing a stop string, keep it; ``stop_reason="length"`` at ``max_tokens``). A
    backend that cannot serve the batch raises; the rollout call then fails with a
    :class:`~rolloutgym.errors.PolicyError` naming the backend and the wave.
    """

    renderer: Renderer

    def generate(
        self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]
    ) -> Sequence[Sample] | Awaitable[Sequence[Sample]]:
        """Sample ``prompts[i]`` with ``params[i]`` for every ``i``."""
        ...


class ConcurrentBatchSampler:
    """Turns any per-request :class:`~rolloutgym.llm.Sampler` into a :class:`BatchSampler`.

    The wave's requests are sent concurrently (at most ``max_concurrency`` at once), which
    is how a server-side batcher (vLLM's server, an OpenAI-compatible endpoint, Tinker's
    sampling client) wants them.

    Args:
        sampler: the per-request backend.
        renderer: the renderer of the sampler's model.
        max_concurrency: the most requests in flight (``None``: the whole wave).
        pad_token_id: the id used to pad ``input_ids`` in the results (default 0).
    """

    def __init__(
        self,
        sampler: Sampler,
        renderer: Renderer,
        *,
        max_concurrency: int | None = None,
        pad_token_id: int | None = None,
    ) -> None:
        if not callable(getattr(sampler, "sample", None)):
            raise ConfigError(f"{type(sampler).__name__} is not a Sampler: it has no 'async sample(prompt, params)'")
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.sampler = sampler
        self.renderer = renderer
        self.max_concurrency = max_concurrency
        if pad_token_id is None:
            pad_token_id = getattr(getattr(renderer, "tokenizer", None), "pad_token_id", None)
        self.pad_token_id = pad_token_id if isinstance(pad_token_id, int) else 0

    async def generate(self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]) -> list[Sample]:
        if len(prompts) != len(params):
            raise ValueError(f"got {len(prompts)} prompts and {len(params)} sampling params")
        if self.max_concurrency is None:
            return list(
                await asyncio.gather(*(self.sampler.sample(p, q) for p, q in zip(prompts, params, strict=True)))
            )
        gate = asyncio.Semaphore(self.max_concurrency)

        async def one(prompt: Sequence[int], item: SamplingParams) -> Sample:
            async with gate:
                return await self.sampler.sample(prompt, item)

        return list(await asyncio.gather(*(one(p, q) for p, q in zip(prompts, params, strict=True))))


def as_batch_sampler(generation: Any, *, renderer: Renderer | None = None) -> BatchSampler:
    """The :class:`BatchSampler` behind ``generation``.

    Args:
        generation: a :class:`BatchSampler`; a :class:`~rolloutgym.llm.TokenPolicy`
            (its sampler's ``batch_sampler(renderer)`` when it has one, else a
            :class:`ConcurrentBatchSampler` over it); or a per-request
            :class:`~rolloutgym.llm.Sampler` together with ``renderer``.
        renderer: replaces the generation's renderer (required for a bare Sampler).

    Raises:
        ConfigError: ``generation`` is none of these, or a renderer is missing.
    """
    if isinstance(generation, TokenPolicy):
        renderer = renderer or generation.renderer
        generation = generation.sampler
    factory = getattr(generation, "batch_sampler", None)
    if callable(factory) and not callable(getattr(generation, "generate", None)):
        if renderer is None:
            raise ConfigError(f"{type(generation).__name__} needs a renderer to batch: pass renderer=")
        return factory(renderer)
    if callable(getattr(generation, "generate", None)):
        if renderer is not None and getattr(generation, "renderer", None) is not renderer:
            try:
                generation.renderer = renderer
            except AttributeError:
                raise ConfigError(f"cannot set the renderer of {type(generation).__name__}") from None
        if getattr(generation, "renderer", None) is None:
            raise ConfigError(
                f"{type(generation).__name__} has generate() but no 'renderer' attribute; pass renderer= "
                "(e.g. rolloutgym.llm.ChatTemplateRenderer(tokenizer))"
            )
        return generation
    if callable(getattr(generation, "sample", None)):
        if renderer is None:
            raise ConfigError(
                f"{type(generation).__name__} is a per-request Sampler; pass renderer= (the model's "
                "rolloutgym.llm.ChatTemplateRenderer) so the loop can render chat messages into its tokens"
            )
        return ConcurrentBatchSampler(generation, renderer)
    raise ConfigError(
        f"generation must be a BatchSampler (generate(prompts, params) + renderer), a TokenPolicy "
        f"(e.g. rolloutgym.make_policy('hf:tiny')) or a Sampler with renderer=; got {type(generation).__name__}"
    )
