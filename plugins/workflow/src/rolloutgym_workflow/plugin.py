"""Hook implementations of rolloutgym-workflow: the ``workflow`` and ``custom`` templates and the refund envs."""

from __future__ import annotations

from rolloutgym_protocol import EnvSpec, GraderSpec, TemplateSpec, hookimpl


@hookimpl
def rolloutgym_templates() -> list[TemplateSpec]:
    return [
        TemplateSpec(
            "workflow",
            "rolloutgym_workflow.template:compile_workflow",
            "Lookup/action/mock tools over read-only fixtures and a mutable state "
            "(the rollout SDK's workflow template).",
            validator="rolloutgym_workflow._shapes:validate_workflow",
        ),
        TemplateSpec(
            "custom",
            "rolloutgym_workflow.template:compile_custom",
            "Tools with templated responses and state mutations (the rollout SDK's custom template).",
            validator="rolloutgym_workflow._shapes:validate_custom",
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
                "Superseded by workflow/refund-v2 (here a status question accepts a reply that names every "
                "status; kept so v0 runs stay comparable). Retail customer support in the spirit of tau-bench: "
                "authenticate the customer, then handle refunds, cancellations, exchanges and address changes "
                "under written policy rules (30-day "
                "delivered-only refunds, never above the amount paid, no changes to shipped orders). 49 tasks "
                "with hidden ground truth from replayed reference actions, including tasks whose right answer "
                "is to refuse. Multi-turn chat with tool calls; reward 1 when the final state matches the "
                "ground truth and the agent gave a final answer."
            ),
            tags=("workflow", "multi-turn", "tools", "customer-support", "policy-following"),
            splits=("train", "dev", "test"),
            max_steps=30,
            replayable=True,
            forkable=True,
        ),
        EnvSpec(
            id="workflow/refund-v1",
            entry_point="rolloutgym_workflow.refund:make_refund_env_v1",
            tasks="rolloutgym_workflow.refund:refund_tasks_v1",
            description=(
                "Superseded by workflow/refund-v2 (here a bare reply with no tool call passes the two "
                "unknown-email refusals, so --policy random scores 4%; kept so v1 runs stay comparable). "
                "Retail customer support in the spirit of tau-bench; status answers must commit to one status."
            ),
            tags=("workflow", "multi-turn", "tools", "customer-support", "policy-following"),
            splits=("train", "dev", "test"),
            max_steps=30,
            replayable=True,
            forkable=True,
        ),
        EnvSpec(
            id="workflow/refund-v2",
            entry_point="rolloutgym_workflow.refund:make_refund_env_v2",
            tasks="rolloutgym_workflow.refund:refund_tasks_v2",
            description=(
                "Retail customer support in the spirit of tau-bench: authenticate the customer, then handle "
                "refunds, cancellations, exchanges and address changes under written policy rules (30-day "
                "delivered-only refunds, never above the amount paid, no changes to shipped orders). 49 tasks "
                "with hidden ground truth from replayed reference actions, including tasks whose right answer "
                "is to refuse. Multi-turn chat with tool calls; reward 1 when the final state matches the "
                "ground truth and the agent gave a final answer that commits to one answer (a reply naming several "
                "order statuses scores 0); a refusal whose right end state is the untouched world (an unknown "
                "email) must rest on the lookup it refuses after."
            ),
            tags=("workflow", "multi-turn", "tools", "customer-support", "policy-following"),
            splits=("train", "dev", "test"),
            max_steps=30,
            replayable=True,
            forkable=True,
        ),
        EnvSpec(
            id="workflow/refund-conv-v0",
            entry_point="rolloutgym_workflow.refund_conv:make_refund_conv_env",
            tasks="rolloutgym_workflow.refund_conv:refund_conv_tasks",
            description=(
                "The refund domain as conversations (tau-bench style): a simulated customer opens with a vague "
                "request and reveals their email, order number, item or new address only when asked; some give "
                "a wrong email first, change their request, or press the agent to break policy. 40 tasks, task "
                "families kept apart across splits. Reward 1 when the final state matches the ground truth "
                "replayed from a reference conversation and the agent told the customer the answer; measure "
                "reliability with pass^k. Options: user_policy=PROVIDER:MODEL lets a model play the customer."
            ),
            tags=("workflow", "multi-turn", "tools", "customer-support", "policy-following", "conversation"),
            splits=("train", "dev", "test"),
            max_steps=40,
            replayable=True,
            forkable=True,
            fork_note="forks with the scripted customer; a model customer (user_policy=...) cannot fork",
        ),
    ]


@hookimpl
def rolloutgym_graders() -> list[GraderSpec]:
    return [
        GraderSpec(
            "calls_from_task",
            "rolloutgym_workflow.graders:calls_from_task",
            "every call the task lists in metadata['required_calls'] was made (arguments as a subset)",
        )
    ]
