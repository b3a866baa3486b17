"""Cross-checking the tau2 envs against tau2's own evaluator (used by the tests and benchmarks/tau2_oracle.py).

``tau2_verdict`` builds the trajectory of a list of tau2 actions straight on the package's own
domain (``registry.get_env_constructor``: no cache, none of our env's code) and grades it with
tau2's ``evaluate_simulation``; ``play`` runs the same actions through our env as agent replies.
``variants`` makes wrong versions of a task's gold actions.
"""

from __future__ import annotations

import json
from typing import Any

from .tau2_envs import STOP, Tau2Env, evaluate_trajectory
from .tau2_tasks import _BASES, _tau2

__all__ = ["gold", "play", "replies", "tau2_verdict", "variants", "writes"]

Reply = dict[str, Any]


def gold(env: Tau2Env) -> list[Any]:
    criteria = env.tau2_task.evaluation_criteria
    return list(criteria.actions or []) if criteria else []


def replies(env: Tau2Env, actions: list[Any]) -> list[Reply]:
    """Agent replies that carry out ``actions`` (the user's asked of the user), then the communicate info."""
    replies: list[Reply] = []
    for index, action in enumerate(actions):
        if action.requestor == "user":
            replies.append(
                {"role": "assistant", "content": f"Please run {action.name}({json.dumps(action.arguments)})."}
            )
        else:
            call = {"id": f"c{index}", "name": action.name, "arguments": dict(action.arguments)}
            replies.append({"role": "assistant", "content": "", "tool_calls": [call]})
    info = env.tau2_task.evaluation_criteria.communicate_info or []
    replies.append({"role": "assistant", "content": " ".join([*info, STOP])})
    return replies


def play(env: Tau2Env, script: list[Reply]) -> tuple[float, dict[str, Any]]:
    env.reset(seed=0)
    for reply in script:
        _, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return reward, info
    raise AssertionError("the episode did not end")


def tau2_verdict(env: Tau2Env, actions: list[Any]) -> float:
    """tau2's own evaluator on the same actions, the trajectory built on the package's own domain."""
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage

    task = env.tau2_task
    registry = _tau2()
    environment = registry.get_env_constructor(env.task.domain)()
    state = task.initial_state
    environment.set_state(
        initialization_data=state.initialization_data if state else None,
        initialization_actions=state.initialization_actions if state else None,
        message_history=[],
    )
    messages: list[Any] = [UserMessage(role="user", content="Hi.")]
    for index, action in enumerate(actions):
        call = ToolCall(id=f"t{index}", name=action.name, arguments=dict(action.arguments), requestor=action.requestor)
        kind = UserMessage if action.requestor == "user" else AssistantMessage
        messages.append(kind(role=action.requestor, tool_calls=[call]))
        messages.append(environment.get_response(call))
    info = task.evaluation_criteria.communicate_info or []
    messages.append(AssistantMessage(role="assistant", content=" ".join([*info, STOP])))
    return evaluate_trajectory(task, messages, "agent_stop", env.task.domain).reward


def variants(actions: list[Any], changing_tools: set[str]) -> dict[str, list[Any]]:
    """The gold actions and wrong versions of them: the last state-changing one dropped, one of its
    arguments changed, nothing done."""
    variants = {"gold": actions, "nothing": []}
    changing = [i for i, action in enumerate(actions) if action.name in changing_tools or action.requestor == "user"]
    if changing:
        last = changing[-1]
        variants["dropped"] = actions[:last] + actions[last + 1 :]
        action = actions[last]
        if action.arguments:
            key = sorted(action.arguments)[0]
            value = action.arguments[key]
            wrong = value + 1 if isinstance(value, int) and not isinstance(value, bool) else f"{value}x"
            changed = action.model_copy(update={"arguments": {**action.arguments, key: wrong}})
            variants["changed"] = [*actions[:last], changed, *actions[last + 1 :]]
    return variants


def writes(env: Tau2Env) -> set[str]:
    tools = _BASES[env.task.domain].tools
    return {name for name in tools.get_tools() if str(tools.tool_type(name).value) == "write"}
