"""What a ``WorkflowEnv`` fork copies: the mutable state, the tool-call records, the scripted user.

Everything else an env holds (the compiled program, the task, the tools, the judge) is
read-only during an episode, so a fork shares it. A conversation played by a model user
(``user_policy=``) cannot fork: the model's side of the conversation is not data.
"""

from __future__ import annotations

from typing import Any

from rolloutgym.verifiers import ToolCallRecord
from rolloutgym_protocol import from_jsonable, to_jsonable
from rolloutgym_protocol.errors import NotForkable

from .scripted_user import ScriptedUser

__all__ = ["restore_workflow", "workflow_state"]

_USER_FIELDS = ("turns", "changed", "pressed", "confused")


def _user_state(user: Any) -> dict[str, Any] | None:
    if user is None:
        return None
    if not isinstance(user, ScriptedUser):
        raise NotForkable(
            f"{type(user).__name__} cannot fork: the simulated user is a model policy (user_policy=...); "
            "fork conversations played by the task's scripted user"
        )
    state: dict[str, Any] = {name: getattr(user, name) for name in _USER_FIELDS}
    state["given_wrong"] = sorted(user.given_wrong)
    state["corrected"] = sorted(user.corrected)
    return state


def workflow_state(env: Any) -> dict[str, Any]:
    """The episode's data as JSON values (exact: ``to_jsonable`` keeps every digit and byte)."""
    return {
        "state": to_jsonable(env.state),
        "records": [to_jsonable([r.name, r.arguments, r.result, r.error]) for r in env.records],
        "said": list(env._said),
        "conversation": [list(turn) for turn in env._conversation],
        "env_faults": list(env._env_faults),
        "user_turns": env._user_turns,
        "invalid": env._invalid,
        "oracle_position": env._oracle_position,
        "done": env._done,
        "user": _user_state(env.user),
    }


def restore_workflow(env: Any, data: dict[str, Any]) -> None:
    """Replace ``env``'s episode with ``data`` (from :func:`workflow_state`); new containers throughout."""
    state = from_jsonable(data["state"])
    if not isinstance(state, dict):
        raise TypeError("the workflow state must be an object")
    records = []
    for entry in data["records"]:
        name, arguments, result, error = from_jsonable(entry)
        records.append(ToolCallRecord(str(name), arguments, result, None if error is None else str(error)))
    user_data = data["user"]
    if (user_data is None) != (env.user_section is None):
        raise ValueError("the state's conversation does not match this task's (a user section on one side only)")
    env.state, env.records = state, records
    env._said = [str(text) for text in data["said"]]
    env._conversation = [(str(role), str(text)) for role, text in data.get("conversation", ())]
    env._env_faults = [str(text) for text in data.get("env_faults", ())]
    env._user_turns, env._invalid = int(data["user_turns"]), int(data["invalid"])
    env._oracle_position, env._done = int(data["oracle_position"]), bool(data["done"])
    env.user = None
    if user_data is not None:
        user = ScriptedUser(env.user_section)
        for name in _USER_FIELDS:
            setattr(user, name, type(getattr(user, name))(user_data[name]))
        user.given_wrong = {str(key) for key in user_data["given_wrong"]}
        user.corrected = {str(key) for key in user_data["corrected"]}
        env.user = user
