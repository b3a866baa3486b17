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

__all__ = ["VLLMEngineSampler", "load_llm", "sample_from_output", "vllm_sampling_params"]

_Pending = tuple[tuple[int, ...], SamplingParams, "asyncio.Future[Sample]"]


def load_llm(model: str, engine_args: Mapping[str, Any] | None = None) -> Any:
    """Create ``vllm.LLM(model=model, **engine_args)``.

    Raises:
        PolicyError: vLLM is not installed, or the engine could not start (no GPU, the
            model cannot be found, not enough memory); the message says what to do.
    """
    try:
        import vllm
    except ImportError as exc:
        raise PolicyError(
            f"vllm:{model} without --base-url runs vLLM's offline engine, which needs the 'vllm' package "
            f"and a CUDA GPU ({exc}). Install it with: pip install 'rolloutgym-vllm[engine]'. Or serve the "
            "model elsewhere ('vllm serve MODEL') and pass --base-url http://HOST:PORT/v1."
        ) from None
    try:
        return vllm.LLM(model=model, **dict(engine_args or {}))
    except Exception as exc:  # vLLM raises many kinds; all mean "no engine"
        raise PolicyError(
            f"vLLM could not start an engine for {model!r}: {type(exc).__name__}: {exc}. Check that a GPU is "
            "visible (nvidia-smi), that the model name or path is right, and lower "
            "--policy-arg engine_args='{\"gpu_memory_utilization\": 0.5}' if memory is short."
        ) from exc


def _sampled_logprob(entry: Any, token: int) -> float | None:
    if entry is None:
        return None
    try:
        value = entry[token]
    except (KeyError, IndexError, TypeError):
        return None
    return float(getattr(value, "logprob", value))


def vllm_sampling_params(params: SamplingParams, sampling_params_class: Any) -> Any:
    """``vllm.SamplingParams`` (or ``sampling_params_class``) for one request: the sampled
    token's logprob (``logprobs=0``), special tokens and the stop string kept in the output."""
    return sampling_params_class(
        n=1,
        max_tokens=params.max_tokens,
        temperature=params.temperature,
        top_p=params.top_p,
        seed=params.seed,
        stop=list(params.stop) or None,
        stop_token_ids=list(params.stop_token_ids) or None,
        logprobs=0,
        skip_special_tokens=False,
        include_stop_str_in_output=True,
        **dict(params.extra),
    )


def sample_from_output(output: Any) -> Sample:
    """Turn one ``vllm.RequestOutput`` (first completion) into a :class:`~rolloutgym.llm.Sample`."""
    completion = output.outputs[0]
    token_ids = tuple(int(token) for token in completion.token_ids)
    logprobs: tuple[float, ...] | None = None
    if completion.logprobs is not None:
        values = [_sampled_logprob(completion.logprobs[index], token) for index, token in enumerate(token_ids)]
        if all(value is not None for value in values):
            logprobs = tuple(value for value in values if value is not None)
    prompt = getattr(output, "prompt_token_ids", None)
    info: dict[str, Any] = {"finish_reason": completion.finish_reason}
    if getattr(completion, "stop_reason", None) is not None:
        info["matched_stop"] = completion.stop_reason
    return Sample(
        token_ids=token_ids,
        logprobs=logprobs,
        stop_reason="length" if completion.finish_reason == "length" else "stop",
        prompt_token_ids=tuple(int(token) for token in prompt) if prompt is not None else None,
        info=info,
    )


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
