"""rolloutgym-tinker: token-exact rollouts with Tinker's ``SamplingClient``.

``rolloutgym run toy/guess-v0 --policy tinker:Qwen/Qwen3-8B`` (with ``TINKER_API_KEY``);
``--policy-arg model_path=tinker://...`` samples a fine-tuned checkpoint. Prompts are
rendered by a tinker-cookbook renderer (or the model's chat template), sent as token ids,
and the sampled tokens and logprobs are recorded verbatim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from .client import create_sampling_client
    from .policy import make_policy, policy_from_client
    from .renderer import CookbookRenderer
    from .sampler import TinkerSampler

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "client": ["create_sampling_client"],
        "policy": ["make_policy", "policy_from_client"],
        "renderer": ["CookbookRenderer"],
        "sampler": ["TinkerSampler"],
    },
)
