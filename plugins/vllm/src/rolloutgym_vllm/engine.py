"""A token-level :class:`~rolloutgym.llm.Sampler` over vLLM's offline engine (``vllm.LLM``, needs a GPU).

Episodes call :meth:`VLLMEngineSampler.sample` concurrently; requests that arrive within
``batch_wait`` seconds of each other are sent to ``LLM.generate`` as one batch (in a
worker thread, so the event loop keeps running), which is how vLLM wants its work. Prompts
are token ids (``{"prompt_token_ids": [...]}``), and the sampled ids and the sampled
token's logprob (``logprobs=0``) are returned verbatim.

``vllm`` is imported only when an engine is created, never when rolloutgym lists plugins.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym.llm import Sample, SamplingParams
from rolloutgym_protocol.errors import PolicyError

from ._offline import load_llm, sample_from_output, vllm_sampling_params

__all__ = ["VLLMEngineSampler", "load_llm", "sample_from_output", "vllm_sampling_params"]

_Pending = tuple[tuple[int, ...], SamplingParams, "asyncio.Future[Sample]"]


class VLLMEngineSampler:
    """Samples from an in-process ``vllm.LLM``, batching concurrent requests.

    Args:
        model: the model name or path (ignored when ``llm`` is given).
        llm: an existing ``vllm.LLM`` (or anything with its ``generate`` signature).
        engine_args: keyword arguments for ``vllm.LLM`` (``gpu_memory_utilization``,
            ``max_model_len``, ``dtype``, ``enable_prefix_caching``...).
        batch_wait: seconds to wait for more requests before a batch is sent.
        max_batch: the most requests in one batch.
        sampling_params_class: ``vllm.SamplingParams`` unless given.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        llm: Any = None,
        engine_args: Mapping[str, Any] | None = None,
        batch_wait: float = 0.005,
        max_batch: int = 256,
        sampling_params_class: Any = None,
    ) -> None:
        if llm is None:
            if not model:
                raise PolicyError("VLLMEngineSampler needs a model name or an llm object")
            llm = load_llm(model, engine_args)
        if sampling_params_class is None:
            import vllm

            sampling_params_class = vllm.SamplingParams
        self.llm = llm
        self.sampling_params_class = sampling_params_class
        self.batch_wait = batch_wait
        self.max_batch = max_batch
        self.batches: list[int] = []  # sizes of the batches sent, for inspection
        self._generate_lock = threading.Lock()  # one generate() at a time on the engine
        self._pending: dict[asyncio.AbstractEventLoop, list[_Pending]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def vllm_params(self, params: SamplingParams) -> Any:
        """The ``vllm.SamplingParams`` for one turn."""
        return vllm_sampling_params(params, self.sampling_params_class)

    def batch_sampler(self, renderer: Any = None) -> Any:
        """A :class:`~rolloutgym_vllm.VLLMBatchSampler` over the same engine (one
        ``LLM.generate`` call per wave of :func:`rolloutgym.llm.run_multi_turn_rollout`)."""
        from .batch import VLLMBatchSampler

        return VLLMBatchSampler(
            llm=self.llm,
            renderer=renderer,
            sampling_params_class=self.sampling_params_class,
            lock=self._generate_lock,
        )

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        """Queue one request; it is sent with the others that arrive within ``batch_wait``."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Sample] = loop.create_future()
        pending = self._pending.setdefault(loop, [])
        pending.append((tuple(int(token) for token in prompt_token_ids), params, future))
        if len(pending) >= self.max_batch:
            self._flush(loop)
        elif len(pending) == 1:
            loop.call_later(self.batch_wait, self._flush, loop)
        return await future

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        items = self._pending.pop(loop, [])
        items = [item for item in items if not item[2].done()]  # cancelled episodes
        if not items:
            return
        task = loop.create_task(self._run(items))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, items: list[_Pending]) -> None:
        self.batches.append(len(items))
        try:
            outputs = await asyncio.to_thread(self._generate, items)
            if len(outputs) != len(items):
                raise PolicyError(f"vLLM returned {len(outputs)} outputs for {len(items)} prompts")
            results = [sample_from_output(output) for output in outputs]
        except Exception as exc:
            error = (
                exc
                if isinstance(exc, PolicyError)
                else PolicyError(f"vLLM generation failed: {type(exc).__name__}: {exc}")
            )
            for _, _, future in items:
                if not future.done():
                    future.set_exception(error)
            return
        for (_, _, future), result in zip(items, results, strict=True):
            if not future.done():
                future.set_result(result)

    def _generate(self, items: list[_Pending]) -> list[Any]:
        prompts = [{"prompt_token_ids": list(prompt)} for prompt, _, _ in items]
        params = [self.vllm_params(item_params) for _, item_params, _ in items]
        with self._generate_lock:
            return list(self.llm.generate(prompts, params, use_tqdm=False))
