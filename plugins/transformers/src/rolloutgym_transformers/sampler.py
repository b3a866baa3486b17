"""The token-level sampler over a local transformers model.

Decoding is a plain loop over the model's forward pass with its KV cache, so every detail
is ours and exact: the prompt fed to the model is reported back (provenance check),
each sampled token's logprob is taken from the raw logits (``log_softmax`` before
temperature and top-p), stop token ids and stop strings end the sample *after* the token
that completes them, and ``max_tokens`` ends it with ``stop_reason="length"``.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Sequence
from typing import Any

import torch
from rolloutgym.llm import Sample, SamplingParams
from rolloutgym.runner.activity import count_tokens

__all__ = ["TransformersSampler"]


class TransformersSampler:
    """Samples from a causal LM; one call at a time per model (calls are serialised).

    Args:
        model: a ``transformers`` causal LM (eval mode, on ``device``).
        tokenizer: its tokenizer (used to detect stop strings).
        device: where the model lives.
        name: a label reported in each sample's info.
        threaded: :meth:`sample` runs the decoding loop in a worker thread, so that other
            episodes' env steps run meanwhile. Default: on accelerators only. On CPU the
            loop runs on the calling thread: there the env steps would compete for the
            same cores, and torch ran the same loop 15-50 % slower in a worker thread than
            on the thread that built the model (hf:tiny 9.5 vs 14.1 ms, SmolLM2-135M 485 vs
            573 ms per 8-token sample; ``benchmarks/README.md``, issue 14).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        device: str = "cpu",
        name: str | None = None,
        threaded: bool | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.device = torch.device(device)
        self.name = name
        self.threaded = self.device.type != "cpu" if threaded is None else bool(threaded)
        self._lock = threading.Lock()
        parameters = inspect.signature(model.forward).parameters
        self._cache_argument = "cache" if "cache" in parameters else "past_key_values"
        self._default_generator = torch.Generator(device="cpu")
        self._default_generator.manual_seed(0)

    def batch_sampler(self, renderer: Any = None) -> Any:
        """A :class:`~rolloutgym_transformers.TransformersBatchSampler` over the same model
        (for :func:`rolloutgym.llm.run_multi_turn_rollout`: one padded batch per wave)."""
        from .batch import TransformersBatchSampler

        return TransformersBatchSampler(self, renderer)

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        """Sample (in a worker thread when :attr:`threaded`, so that other episodes' env steps keep running)."""
        if self.threaded:
            return await asyncio.to_thread(self.sample_sync, prompt_token_ids, params)
        return self.sample_sync(prompt_token_ids, params)

    def sample_sync(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        """The blocking sampler (what :meth:`sample` runs in a thread)."""
        if not prompt_token_ids:
            raise ValueError("cannot sample from an empty prompt")
        with self._lock, torch.inference_mode():
            return self._sample(list(prompt_token_ids), params)

    def _pick(self, logits: torch.Tensor, params: SamplingParams, generator: torch.Generator) -> int:
        if params.greedy:
            return int(torch.argmax(logits))
        probabilities = torch.softmax(logits / params.temperature, dim=-1)
        if params.top_p < 1.0:
            sorted_probabilities, order = torch.sort(probabilities, descending=True)
            keep = torch.cumsum(sorted_probabilities, dim=-1) - sorted_probabilities < params.top_p
            filtered = torch.zeros_like(probabilities)
            filtered[order[keep]] = sorted_probabilities[keep]
            probabilities = filtered
        return int(torch.multinomial(probabilities.cpu(), 1, generator=generator))

    def _hits_stop_string(self, generated: list[int], stop: tuple[str, ...], window: int) -> bool:
        tail = self.tokenizer.decode(generated[-window:], skip_special_tokens=False)
        return any(text in tail for text in stop)

    def _sample(self, prompt: list[int], params: SamplingParams) -> Sample:
        started = time.perf_counter()
        generator = self._default_generator
        if params.seed is not None:
            generator = torch.Generator(device="cpu")
            generator.manual_seed(int(params.seed))
        stop_ids = set(params.stop_token_ids)
        window = max((len(text) for text in params.stop), default=0) + 2
        input_ids = torch.tensor([prompt], dtype=torch.long, device=self.device)
        cache: Any = None
        tokens: list[int] = []
        logprobs: list[float] = []
        stop_reason = "length"
        while len(tokens) < params.max_tokens:
            arguments = {"input_ids": input_ids, "use_cache": True}
            if cache is not None:
                arguments[self._cache_argument] = cache
            output = self.model(**arguments)
            cache = getattr(output, "cache", None)
            if cache is None:
                cache = output.past_key_values
            logits = output.logits[0, -1].float()
            token = self._pick(logits, params, generator)
            tokens.append(token)
            count_tokens()  # the run's progress bar shows it: a sign of life on a slow CPU
            logprobs.append(float(torch.log_softmax(logits, dim=-1)[token]))
            if token in stop_ids or (params.stop and self._hits_stop_string(tokens, params.stop, window)):
                stop_reason = "stop"
                break
            input_ids = torch.tensor([[token]], dtype=torch.long, device=self.device)
        info: dict[str, Any] = {"seconds": round(time.perf_counter() - started, 6)}
        if self.name:
            info["model"] = self.name
        return Sample(tuple(tokens), tuple(logprobs), stop_reason, tuple(prompt), info)
