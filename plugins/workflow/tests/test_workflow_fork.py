"""Forking workflow episodes: the custom template's nested state, a scripted conversation, and what cannot fork."""

from __future__ import annotations

import json
from typing import Any

import pytest
import rolloutgym as rg
from rolloutgym.declarative import Environment, Task, custom_config, custom_tool
from rolloutgym_protocol import EnvState
from rolloutgym_protocol.errors import NotForkable, StateError
from rolloutgym_workflow import compile_custom


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": name, "arguments": arguments}]}


def _custom_env() -> Any:
    config = custom_config(
        tools=[
            custom_tool(
                "note",
                description="Add a note.",
                params_schema={"text": "string"},
                mutates={"path": "notes[]"},
            ),
            custom_tool(
                "rename",
                description="Set the last name.",
                params_schema={"last": "string"},
                mutates={"path": "profile.name.last", "value": "${args.last}"},
            ),
        ],
        initial_state={"profile": {"name": {"last": "Byron"}}, "notes": []},
    )
    environment = Environment(slug="notes", name="Notes", template="custom", config=config)
    return compile_custom(environment)(Task(instruction="Take notes"))


def test_custom_template_forks_keep_their_own_nested_state_and_records() -> None:
    env = _custom_env()
    env.reset(seed=0)
    env.step(call("note", {"text": "first"}))
    (child,) = env.fork()
    child.step(call("rename", {"last": "Lovelace"}))
    child.step(call("note", {"text": "only in the fork"}))
    assert env.state == {"profile": {"name": {"last": "Byron"}}, "notes": [{"text": "first"}]}
    assert [record.name for record in env.records] == ["note"]
    assert [record.name for record in child.records] == ["note", "rename", "note"]
    assert child.state["profile"]["name"]["last"] == "Lovelace" and len(child.state["notes"]) == 2


def test_a_scripted_conversation_forks_mid_dialogue() -> None:
    env = rg.make("workflow/refund-conv-v0", task=0)
    env.reset(seed=0)
    actions = []
    for _ in range(2):
        actions.append(env.oracle_action())
        env.step(actions[-1])
    (child,) = env.fork()
    assert child.user is not env.user and child.user.turns == env.user.turns
    rest = [env.oracle_action() for _ in range(3)]
    for action in rest:
        child._oracle_position = env._oracle_position  # both follow the same script
        assert json.dumps(child.step(action)[:4]) == json.dumps(env.step(action)[:4])


def test_what_cannot_fork_says_why_and_edited_states_are_refused() -> None:
    env = rg.make("workflow/refund-v2", task=0)
    env.reset(seed=0)
    env.step(env.oracle_action())
    data = json.loads(env.snapshot().to_json())
    data["data"]["records"] = [["only", "three", "fields"]]
    with pytest.raises(StateError, match="could not restore this state"):
        rg.make("workflow/refund-v2", task=0).restore(EnvState.from_dict(data))
    with pytest.raises(StateError, match="belongs to env workflow/refund-v2, not workflow/refund-v1"):
        rg.make("workflow/refund-v1", task=0).restore(env.snapshot())
    conversation = rg.make("workflow/refund-conv-v0", task=0, user_policy=lambda observation: "ok")
    conversation.reset(seed=0)
    with pytest.raises(NotForkable, match="the simulated user is a model policy"):
        conversation.fork()
