"""Hook implementations of ``rolloutgym-openai`` (imports nothing heavy: no httpx, no openai)."""

from __future__ import annotations

from rolloutgym_protocol import PolicySpec, hookimpl


@hookimpl
def rolloutgym_policies() -> list[PolicySpec]:
    return [
        PolicySpec(
            "openai",
            "rolloutgym_openai.policy:make_policy",
            "Any OpenAI-compatible chat-completions server (OpenAI, vLLM, SGLang, llama.cpp): tools, "
            "logprobs when offered, retries, timeouts, a concurrency limit. --base-url for local servers.",
            requires_model=True,
            example="openai:gpt-4o-mini",
        )
    ]
