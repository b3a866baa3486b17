"""Hook implementations of ``rolloutgym-tinker`` (imports nothing heavy: no tinker, torch or transformers)."""

from __future__ import annotations

from rolloutgym_protocol import PolicySpec, hookimpl


@hookimpl
def rolloutgym_policies() -> list[PolicySpec]:
    return [
        PolicySpec(
            "tinker",
            "rolloutgym_tinker.policy:make_policy",
            "Token-exact sampling with Tinker's SamplingClient (TINKER_API_KEY); tinker-cookbook renderers "
            "for prompts, stop sequences and tool-call parsing. Client creation has a deadline.",
            requires_model=True,
            example="tinker:Qwen/Qwen3-8B",
        )
    ]
