"""rolloutgym-vllm: token-exact rollouts with vLLM, offline (``vllm.LLM``) or through its server.

``rolloutgym run toy/guess-v0 --policy vllm:Qwen/Qwen3-0.6B`` (a GPU), or
``--policy vllm:Qwen/Qwen3-0.6B --base-url http://127.0.0.1:8000/v1`` for a running
``vllm serve``. Prompts are sent as token ids and the sampled token ids and logprobs are
recorded verbatim, so training data has no re-tokenisation drift.

For :func:`rolloutgym.llm.run_multi_turn_rollout`, :class:`VLLMBatchSampler` sends each
wave of a batch to the offline engine in one ``LLM.generate`` call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from .batch import VLLMBatchSampler
    from .engine import VLLMEngineSampler
    from .policy import make_policy
    from .server import VLLMServerSampler

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "batch": ["VLLMBatchSampler"],
        "engine": ["VLLMEngineSampler"],
        "policy": ["make_policy"],
        "server": ["VLLMServerSampler"],
    },
)
