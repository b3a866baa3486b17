"""``workflow/refund-conv-v0``: the refund domain as conversations with a simulated user.

Same tools, policy and grading as ``workflow/refund-v0``, but the agent is not handed the
request: a scripted user (:mod:`rolloutgym_workflow.user`) opens with a vague request and
holds the facts (email, order number, item, new address) until asked; some users give a
wrong detail first, change their request, or try to talk the agent into breaking policy.
Grading is the final state (ground truth from replaying the reference conversation on a
fresh world) plus what the agent told the user (information tasks must state the answer);
reliability is measured with pass^k (``rolloutgym run ... -n 4`` then ``rolloutgym show``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from rolloutgym.declarative import Environment, Task, workflow_config

from ._data_files import refund_task_records, refund_world
from .refund import _STATE, POLICY, _competing_statuses, _tools, _verifier

__all__ = ["make_refund_conv_env", "refund_conv_environment", "refund_conv_fingerprint", "refund_conv_tasks"]


@functools.cache
def refund_conv_environment() -> Environment:
    """The environment with every conversational task and its replayed ground truth."""
    environment = Environment(
        slug="refund-conv",
        name="Retail Support (conversations)",
        template="workflow",
        description=POLICY,
        config=workflow_config(
            tools=_tools(), fixtures=refund_world("refund_conv"), initial_mutable_state=json.loads(json.dumps(_STATE))
        ),
        verifier=_verifier(1),  # status answers must not hedge over statuses (refund-v1's grading)
    )
    from .template import compile_program

    program = compile_program(environment)
    tasks = []
    for record in refund_task_records("refund_conv"):
        task = Task(
            instruction=record.instruction,
            split=record.split,
            id=record.id,
            reference_actions=record.reference_actions,
            reference_answer=record.reference_answer,
            metadata=record.metadata.model_dump(),
            user=record.user,
        )
        if record.metadata.answer_terms:
            task.metadata["competing_terms"] = _competing_statuses(record.metadata.answer_terms)
        task.hidden_ground_truth = _replay(program, task)
        tasks.append(task)
    environment.tasks = tasks
    return environment


def _replay(program: Any, task: Task) -> dict[str, Any]:
    """The state after the reference conversation, played against the scripted user."""
    from .envs import WorkflowEnv

    environment = WorkflowEnv(program, task, max_tool_calls=100)
    environment.reset()
    finished = False
    for position in range(len(task.reference_actions) + 1):
        action = environment.oracle_action()
        observations, _, terminated, _, info = environment.step(action)
        if info["invalid_actions"]:
            raise RuntimeError(f"refund-conv-v0 task {task.id}: reference step {position} is invalid: {observations}")
        if terminated:
            finished = position == len(task.reference_actions)
            break
    if not finished:
        raise RuntimeError(
            f"refund-conv-v0 task {task.id}: the scripted user did not end the conversation exactly after the "
            "reference answer"
        )
    state = json.loads(json.dumps(environment.state))
    environment.close()
    return state


def refund_conv_tasks() -> list[Task]:
    """The tasks of ``workflow/refund-conv-v0`` (ids like ``conv_full_refund-1``; splits keep families apart)."""
    return list(refund_conv_environment().tasks)


def refund_conv_fingerprint() -> str:
    """sha256 of the environment payload: changes only with a new version of the env."""
    payload = json.dumps(refund_conv_environment().to_payload(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


@functools.cache
def _program() -> Any:
    from .template import compile_program

    return compile_program(refund_conv_environment())


def make_refund_conv_env(task: Task | None = None, **kwargs: Any) -> Any:
    """The env factory of ``workflow/refund-conv-v0`` (options: ``max_tool_calls``, ``user_policy``)."""
    from .envs import WorkflowEnv

    return WorkflowEnv(_program(), task if task is not None else refund_conv_tasks()[0], **kwargs)
