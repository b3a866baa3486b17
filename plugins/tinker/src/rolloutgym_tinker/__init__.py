"""rolloutgym-tinker: token-exact rollouts with Tinker's ``SamplingClient``.

``rolloutgym run toy/guess-v0 --policy tinker:Qwen/Qwen3-8B`` (with ``TINKER_API_KEY``);
``--policy-arg model_path=tinker://...`` samples a fine-tuned checkpoint. Prompts are
rendered by a tinker-cookbook renderer (or the model's chat template), sent as token ids,
and the sampled tokens and logprobs are recorded verbatim.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CookbookRenderer", "TinkerSampler", "create_sampling_client", "make_policy", "policy_from_client"]

_HOMES = {
    "CookbookRenderer": "renderer",
    "TinkerSampler": "sampler",
    "create_sampling_client": "client",
    "make_policy": "policy",
    "policy_from_client": "policy",
}


def __getattr__(name: str) -> Any:
    # Lazy: the plugin module must import without tinker or transformers.
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'rolloutgym_tinker' has no attribute {name!r}")
