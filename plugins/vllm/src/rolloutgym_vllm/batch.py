"""A :class:`~rolloutgym.llm.BatchSampler` over vLLM's offline engine (``vllm.LLM``, needs a GPU).

:func:`rolloutgym.llm.run_multi_turn_rollout` hands each wave of active samples to
:meth:`VLLMBatchSampler.generate`, which makes exactly one ``LLM.generate`` call with
token-id prompts (``{"prompt_token_ids": [...]}``) and one ``vllm.SamplingParams`` per
prompt (per-sample ``max_tokens``, stop strings and seeds), and returns the sampled ids and
the sampled tokens' logprobs verbatim.

vLLM cannot be installed or run without a CUDA GPU, so the tests drive this adapter with
``rolloutgym_vllm.testing.StandInLLM``, an object with ``LLM.generate``'s documented
signature that returns ``RequestOutput``-shaped results; ``benchmarks/gpu/vllm_check.py``
runs the real engine on a GPU machine.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym.llm import ChatTemplateRenderer, Renderer, Sample, SamplingParams
from rolloutgym_protocol.errors import PolicyError

from ._offline import load_llm, sample_from_output, vllm_sampling_params

__all__ = ["VLLMBatchSampler"]


class VLLMBatchSampler:
    """One ``vllm.LLM.generate`` call per wave.

    Args:
        model: the model name or path (ignored when ``llm`` is given).
        llm: an existing ``vllm.LLM`` (or anything with its ``generate`` signature and
            ``get_tokenizer()``).
        engine_args: keyword arguments for ``vllm.LLM``.
        renderer: the model's renderer (default: ``ChatTemplateRenderer(llm.get_tokenizer())``).
        sampling_params_class: ``vllm.SamplingParams`` unless given.
        lock: serialises ``generate`` calls on the engine (shared with a
            :class:`~rolloutgym_vllm.VLLMEngineSampler` over the same engine).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        llm: Any = None,
        engine_args: Mapping[str, Any] | None = None,
        renderer: Renderer | None = None,
        sampling_params_class: Any = None,
        lock: Any = None,
    ) -> None:
        if llm is None:
            if not model:
                raise PolicyError("VLLMBatchSampler needs a model name or an llm object")
            llm = load_llm(model, engine_args)
        if sampling_params_class is None:
            import vllm

            sampling_params_class = vllm.SamplingParams
        self.llm = llm
        self.sampling_params_class = sampling_params_class
        if renderer is None:
            renderer = ChatTemplateRenderer(llm.get_tokenizer())
        self.renderer = renderer
        pad = getattr(getattr(renderer, "tokenizer", None), "pad_token_id", None)
        self.pad_token_id = pad if isinstance(pad, int) else 0
        self.name = f"vllm:{model}" if model else None
        self.batch_sizes: list[int] = []  # one entry per generate() call, for inspection
        self._lock = lock if lock is not None else threading.Lock()

    def generate(self, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]) -> list[Sample]:
        """Sample every prompt in one ``LLM.generate`` call (blocking; the loop runs it in a thread)."""
        if len(prompts) != len(params):
            raise ValueError(f"got {len(prompts)} prompts and {len(params)} sampling params")
        requests = [{"prompt_token_ids": [int(token) for token in prompt]} for prompt in prompts]
        sampling = [vllm_sampling_params(item, self.sampling_params_class) for item in params]
        with self._lock:
            self.batch_sizes.append(len(requests))
            outputs = list(self.llm.generate(requests, sampling, use_tqdm=False))
        if len(outputs) != len(requests):
            raise PolicyError(f"vLLM returned {len(outputs)} outputs for {len(requests)} prompts")
        return [sample_from_output(output) for output in outputs]
