"""rolloutgym-vllm: token-exact rollouts with vLLM, offline (``vllm.LLM``) or through its server.

``rolloutgym run toy/guess-v0 --policy vllm:Qwen/Qwen3-0.6B`` (a GPU), or
``--policy vllm:Qwen/Qwen3-0.6B --base-url http://127.0.0.1:8000/v1`` for a running
``vllm serve``. Prompts are sent as token ids and the sampled token ids and logprobs are
recorded verbatim, so training data has no re-tokenisation drift.

For :func:`rolloutgym.llm.run_multi_turn_rollout`, :class:`VLLMBatchSampler` sends each
wave of a batch to the offline engine in one ``LLM.generate`` call.
"""

from __future__ import annotations

from typing import Any

__all__ = ["VLLMBatchSampler", "VLLMEngineSampler", "VLLMServerSampler", "make_policy"]

_HOMES = {
    "VLLMBatchSampler": "batch",
    "VLLMEngineSampler": "engine",
    "VLLMServerSampler": "server",
    "make_policy": "policy",
}


def __getattr__(name: str) -> Any:
    # Lazy: the plugin module must import without httpx, transformers or vllm.
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'rolloutgym_vllm' has no attribute {name!r}")
