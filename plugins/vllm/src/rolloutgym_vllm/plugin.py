"""Hook implementations of ``rolloutgym-vllm`` (imports nothing heavy: no vllm, torch, transformers or httpx)."""

from __future__ import annotations

from rolloutgym_protocol import PolicySpec, hookimpl


@hookimpl
def rolloutgym_policies() -> list[PolicySpec]:
    return [
        PolicySpec(
            "vllm",
            "rolloutgym_vllm.policy:make_policy",
            "Token-exact sampling with vLLM: the offline engine (GPU), or a running vLLM server with "
            "--base-url (token-id prompts, sampled ids and logprobs recorded verbatim).",
            requires_model=True,
            example="vllm:Qwen/Qwen3-0.6B",
        )
    ]
