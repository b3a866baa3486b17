"""Hook implementations of rolloutgym-workflow: the ``workflow`` and ``custom`` templates and ``workflow/refund-v0``."""

from __future__ import annotations

from rolloutgym_protocol import EnvSpec, TemplateSpec, hookimpl


@hookimpl
def rolloutgym_templates() -> list[TemplateSpec]:
    return [
        TemplateSpec(
            "workflow",
            "rolloutgym_workflow.template:compile_workflow",
            "Lookup/action/mock tools over read-only fixtures and a mutable state (the rollout SDK's workflow template).",
        ),
        TemplateSpec(
            "custom",
            "rolloutgym_workflow.template:compile_custom",
            "Tools with templated responses and state mutations (the rollout SDK's custom template).",
        ),
    ]


@hookimpl
def rolloutgym_envs() -> list[EnvSpec]:
    return [
        EnvSpec(
            id="workflow/refund-v0",
            entry_point="rolloutgym_workflow.refund:make_refund_env",
            tasks="rolloutgym_workflow.refund:refund_tasks",
            description=(
                "Retail customer support in the spirit of tau-bench: authenticate the customer, then handle "
                "refunds, cancellations, exchanges and address changes under written policy rules (30-day "
                "delivered-only refunds, never above the amount paid, no changes to shipped orders). 49 tasks "
                "with hidden ground truth from replayed reference actions, including tasks whose right answer "
                "is to refuse. Multi-turn chat with tool calls; reward 1 when the final state matches the "
                "ground truth and the agent gave a final answer."
            ),
            tags=("workflow", "multi-turn", "tools", "customer-support", "policy-following"),
            splits=("train", "dev", "test"),
            max_steps=30,
            replayable=True,
        ),
    ]
