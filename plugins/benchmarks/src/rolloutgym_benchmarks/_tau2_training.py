"""The training reward of the tau2 envs: tau2's verdict, on tasks it can tell apart, without dumps.

tau2's evaluator multiplies the components of a task's ``reward_basis`` and nothing else. Two
ways to its 1.0 teach nothing (issue 50, class 6):

* a task where nothing its ``reward_basis`` checks differs from the untouched world (its gold
  actions write nothing, it asks the agent to tell nothing, its natural-language assertions are
  outside the basis) is passed by ending the conversation (``Done. ###STOP###``, with or without
  the lookups). Such a task is *untrainable*: its training reward is 0 with the reason, whatever
  the agent does (a refusal the policy requires is right there, but the verdict cannot tell it
  from giving up).
* a task that asks the agent to tell the user something (``communicate_info``) is passed by
  pasting every tool result to the user: the value is in there. The training reward is 0 when
  a message to the user copies :data:`DUMP_CHARS` characters or more verbatim from a tool result.

The benchmark's score stays tau2's (``reward="benchmark"``, the default). ``reward="training"``
makes the step reward the training one; both are components of the score either way.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DUMP_CHARS", "dumped_tool_output", "untrainable_reason"]

DUMP_CHARS = 80
"""A message to the user holding this many characters of a tool result verbatim is a dump."""
_WINDOW = DUMP_CHARS * 3 // 4
_STRIDE = DUMP_CHARS - _WINDOW


def untrainable_reason(task: Any, write_tools: set[str]) -> str | None:
    """Why tau2's verdict on ``task`` (a tau2 ``Task``) cannot train (``None`` when it can)."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return "the task has no evaluation criteria"
    basis = {str(getattr(kind, "value", kind)).upper() for kind in criteria.reward_basis or []}
    actions = list(criteria.actions or [])
    changes = any(action.requestor == "user" or action.name in write_tools for action in actions)
    checked = (
        (changes and bool(basis & {"DB", "ACTION"}))
        or ("COMMUNICATE" in basis and bool(criteria.communicate_info))
        or ("NL_ASSERTION" in basis and bool(criteria.nl_assertions))
        or ("ENV_ASSERTION" in basis and bool(criteria.env_assertions))
    )
    if checked:
        return None
    return (
        "what the task's reward basis checks holds for the untouched world (no write, nothing to tell), "
        "so ending the conversation after any lookups passes"
    )


def dumped_tool_output(trajectory: list[Any]) -> bool:
    """Whether a message of the agent to the user copies a long run of a tool result verbatim."""
    results = [str(message.content) for message in trajectory if getattr(message, "role", None) == "tool"]
    results = [text for text in results if len(text) >= DUMP_CHARS]
    for message in trajectory:
        if getattr(message, "role", None) != "assistant" or not isinstance(getattr(message, "content", None), str):
            continue
        text = message.content
        for start in range(0, max(len(text) - _WINDOW + 1, 0), _STRIDE):
            window = text[start : start + _WINDOW]
            if any(window in result for result in results):
                return True
    return False
