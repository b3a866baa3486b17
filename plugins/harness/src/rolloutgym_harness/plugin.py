"""Hook implementations of ``rolloutgym-harness`` (imports nothing heavy: no starlette, uvicorn or torch)."""

from __future__ import annotations

from rolloutgym_protocol import PolicySpec, hookimpl


@hookimpl
def rolloutgym_policies() -> list[PolicySpec]:
    return [
        PolicySpec(
            "harness",
            "rolloutgym_harness.harness:make_policy",
            "An agent program you do not own (any CLI agent from a command template) with its model calls "
            "served by a local interception endpoint (OpenAI Chat/Responses, Anthropic Messages) that records "
            "exact tokens: --policy harness:command --policy-arg command='...' --policy-arg model=hf:tiny "
            "(or model=openai:NAME --base-url URL: forwarded to that server); on a tool env the harness also "
            "gets the env's tools over MCP (ROLLOUTGYM_MCP_URL); sandbox=bwrap runs it in bubblewrap.",
            requires_model=True,
            example="harness:command",
        )
    ]
