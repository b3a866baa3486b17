"""The calls into vLLM's offline API that both offline samplers make (engine.py, batch.py).

Creating the engine, building ``vllm.SamplingParams`` for a request, and reading a
``vllm.RequestOutput`` back as a :class:`~rolloutgym.llm.Sample`. ``vllm`` itself is
imported only by :func:`load_llm`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rolloutgym.install_hints import pip_install
from rolloutgym.llm import Sample, SamplingParams
from rolloutgym_protocol.errors import PolicyError

__all__ = ["load_llm", "sample_from_output", "vllm_sampling_params"]


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
            f"and a CUDA GPU ({exc}). Install it with: {pip_install('rolloutgym-vllm', 'engine')}. Or serve the "
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
