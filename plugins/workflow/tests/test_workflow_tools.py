"""The workflow and custom templates: tool shapes, templating, argument checks, state handling."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rolloutgym.declarative import (
    Environment,
    Task,
    action_tool,
    custom_config,
    custom_tool,
    lookup_tool,
    mock_tool,
    primitive,
    verifier_config,
    workflow_config,
)
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_workflow import WorkflowEnv, compile_custom, compile_workflow


def call(name: str, arguments: Any = None, call_id: str = "c1") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "name": name, "arguments": arguments if arguments is not None else {}}],
    }


def play(environment: WorkflowEnv, name: str, arguments: Any = None) -> Any:
    observations, reward, terminated, truncated, info = environment.step(call(name, arguments))
    content = observations[0]["content"]
    return content if content.startswith("error:") else json.loads(content)


SHOP_CONFIG = workflow_config(
    tools=[
        lookup_tool(
            "get_customer",
            from_array="customers",
            match_field="id",
            description="Read a customer.",
            params_schema={"id": "string"},
        ),
        {"kind": "lookup", "name": "get_order", "fixturePath": "orders.${args.order_id}"},
        {
            "kind": "action",
            "name": "refund",
            "appendTo": "refunds",
            "value": {"order_id": "${args.order_id}", "amount": "${args.amount}", "note": "refund of ${args.amount}"},
        },
        action_tool(
            "log",
            state_array="events",
            description="Log an event.",
            params_schema={"event": "string", "count": "integer"},
        ),
        mock_tool("weather", description="Weather.", response={"forecast": "sunny"}),
        mock_tool("echo", description="Echo.", response={"you said": "${args.text}"}, params_schema={"text": "string"}),
        {
            "kind": "action",
            "name": "tag",
            "appendTo": "tags",
            "paramsSchema": {"labels": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
        },
    ],
    fixtures={
        "customers": [{"id": "C-1", "name": "Ada"}, {"id": 2, "name": "Numeric"}],
        "orders": {"O-1": {"customer": "Alice", "amount": 100, "status": "shipped"}, "O.2": {"amount": 5}},
    },
    initial_mutable_state={"refunds": [], "events": []},
)


def shop(task: Task | None = None, **kwargs: Any) -> WorkflowEnv:
    environment = Environment(slug="shop", name="Shop", template="workflow", config=SHOP_CONFIG)
    environment.verifier = verifier_config(primitive("refunded", "state_match", expected={"refunds.length": 1}))
    factory = compile_workflow(environment)
    env = factory(
        task or Task(instruction="Refund O-1", hidden_ground_truth={"refunds": [{"order_id": "O-1", "amount": 100}]}),
        **kwargs,
    )
    env.reset(seed=0)
    return env


def test_first_observation_and_tool_definitions():
    environment = Environment(
        slug="shop", name="Shop", template="workflow", config=SHOP_CONFIG, description="Follow the rules."
    )
    env = compile_workflow(environment)(Task(instruction="Refund O-1", input={"order": "O-1"}))
    observation, info = env.reset()
    assert (
        observation[0]["role"] == "system"
        and "'Shop' environment" in observation[0]["content"]
        and "Follow the rules." in observation[0]["content"]
    )
    assert observation[1] == {"role": "user", "content": 'Refund O-1\n\nInput:\n{\n  "order": "O-1"\n}'}
    definitions = {tool["function"]["name"]: tool["function"]["parameters"] for tool in env.tools}
    assert definitions["get_customer"] == {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "additionalProperties": False,
    }
    assert definitions["get_order"]["required"] == ["order_id"]  # inferred from the fixturePath placeholder
    assert definitions["refund"]["required"] == ["amount", "order_id"]
    assert env.observation_space.contains(observation)


def test_lookup_both_shapes():
    env = shop()
    assert play(env, "get_customer", {"id": "C-1"}) == {"id": "C-1", "name": "Ada"}
    assert (
        play(env, "get_customer", {"id": "2"}) == "error: not found: no customers entry with id = '2'"
    )  # strict, as the SDK: "2" != 2
    assert play(env, "get_order", {"order_id": "O-1"}) == {"customer": "Alice", "amount": 100, "status": "shipped"}
    assert play(env, "get_order", {"order_id": "O.2"}) == {"amount": 5}  # a dot in the value stays in the key
    assert play(env, "get_order", {"order_id": "O-9"}) == "error: not found: orders.O-9"


def test_actions_append_with_typed_templates():
    env = shop()
    assert play(env, "refund", {"order_id": "O-1", "amount": 100})["ok"] is True
    assert play(env, "log", {"event": "refund", "count": 1}) == {"ok": True, "event": "refund", "count": 1}
    assert play(env, "tag", {"labels": ["a", "b"]}) == {"ok": True, "labels": ["a", "b"]}
    assert env.state["refunds"] == [{"order_id": "O-1", "amount": 100, "note": "refund of 100"}]
    assert env.state["events"] == [{"event": "refund", "count": 1}]
    assert env.state["tags"] == [{"labels": ["a", "b"]}]
    assert play(env, "weather") == {"forecast": "sunny"}
    assert play(env, "echo", {"text": "hi"}) == {"you said": "hi"}


def test_state_is_fresh_each_episode_and_fixtures_stay_read_only():
    env = shop()
    order = play(env, "get_order", {"order_id": "O-1"})
    order["status"] = "hacked"
    play(env, "refund", {"order_id": "O-1", "amount": 100})
    _, reward, terminated, _, info = env.step({"role": "assistant", "content": "done"})
    assert terminated and reward == 1.0 and info["state"]["refunds"][0]["amount"] == 100
    env.reset()
    assert env.state == {"refunds": [], "events": []}
    assert play(env, "get_order", {"order_id": "O-1"})["status"] == "shipped"
    other = shop()
    assert other.state["refunds"] == []


@pytest.mark.parametrize(
    ("tool_call", "error"),
    [
        (
            {"id": "c", "name": "refnd", "arguments": {}},
            "error: unknown tool 'refnd'; available tools: get_customer, get_order, refund",
        ),
        ({"id": "c", "name": "log", "arguments": "{not json"}, "error: log: arguments are not valid JSON"),
        ({"id": "c", "name": "log", "arguments": "[1, 2]"}, "error: log: arguments must be a JSON object, got list"),
        (
            {"id": "c", "name": "log", "arguments": {"event": "x"}},
            "error: log: missing argument 'count' (expected event: string, count: integer)",
        ),
        (
            {"id": "c", "name": "log", "arguments": {"event": "x", "count": "1"}},
            "error: log: argument 'count' must be a integer, got \"1\"",
        ),
        (
            {"id": "c", "name": "log", "arguments": {"event": "x", "count": True}},
            "error: log: argument 'count' must be a integer, got true",
        ),
        (
            {"id": "c", "name": "log", "arguments": {"event": "x", "count": 1, "extra": 1}},
            "error: log: unknown argument 'extra'",
        ),
        ({"id": "c", "name": "tag", "arguments": {"labels": ["a", "b", "c", "d"]}}, "error: tag: argument 'labels': "),
        ({"id": "c", "name": "refund", "arguments": {"order_id": "O-1"}}, "error: refund: missing argument 'amount'"),
        (
            {"id": "c", "name": "log", "arguments": {"event": "x" * 200_000, "count": 1}},
            "error: log: arguments are larger than 100000 characters",
        ),
        ({"id": "c", "name": None, "arguments": {}}, "error: unknown tool None"),
        ({"id": "c", "function": {"name": "weather", "arguments": "{}"}}, '{"forecast": "sunny"}'),
    ],
)
def test_malformed_tool_calls_become_tool_errors(tool_call: dict[str, Any], error: str):
    env = shop()
    observations, reward, terminated, truncated, info = env.step(
        {"role": "assistant", "content": "", "tool_calls": [tool_call]}
    )
    assert observations[0]["content"].startswith(error)
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["invalid_actions"] == (0 if error.startswith("{") else 1)
    assert env.state == {"refunds": [], "events": []}


def test_deeply_nested_and_odd_actions_never_crash():
    env = shop()
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    assert play(env, "tag", {"labels": deep}).startswith("error: tag: arguments nest deeper than 32 levels")
    assert play(env, "tag", json.dumps({"labels": [[[1]]]})).startswith("error: tag: argument 'labels.0'")
    observations, *_, info = env.step({"role": "assistant", "content": "", "tool_calls": ["not a call"]})
    assert observations[0]["content"].startswith("error: a tool call must be an object")
    observations, reward, terminated, _, info = env.step(42)  # type: ignore[arg-type]
    assert observations[0]["role"] == "user" and not terminated
    assert info["invalid_actions"] == 4


def test_tool_call_budget():
    env = shop(max_tool_calls=2)
    play(env, "weather")
    two_calls = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "a", "name": "weather", "arguments": {}},
            {"id": "b", "name": "weather", "arguments": {}},
        ],
    }
    observations, *_ = env.step(two_calls)
    assert observations[0]["content"] == '{"forecast": "sunny"}'
    assert observations[1]["content"].startswith("error: the tool-call budget (2) is spent; give your final answer now")
    observations, reward, terminated, truncated, info = env.step(call("weather"))
    assert truncated and not terminated and "score" in info
    with pytest.raises(ConfigError, match="max_tool_calls"):
        shop(max_tool_calls=0)


def test_final_answer_grades_and_explains():
    env = shop()
    _, reward, terminated, _, info = env.step({"role": "assistant", "content": "I refunded it."})
    assert terminated and reward == 0.0
    assert info["score"]["feedback"] == "failed: 0/1 checks passed. [refunded] refunds.length: expected 1, got 0"


def test_custom_template_nested_mutations_and_append():
    config = custom_config(
        tools=[
            custom_tool(
                "set_name",
                description="Set the profile's last name.",
                params_schema={"last": "string"},
                response={"message": "Hello ${args.last}", "saved": "${args.last}"},
                mutates={"path": "profile.name.last", "value": "${args.last}"},
            ),
            custom_tool(
                "note",
                description="Add a note.",
                params_schema={"text": "string", "priority": "integer"},
                mutates={"path": "notes[]"},
            ),
            custom_tool(
                "score",
                description="Set a score.",
                params_schema={"player": "string", "points": "number"},
                mutates={"path": "scores.${args.player}", "value": "${args.points}"},
            ),
            custom_tool(
                "break",
                description="Writes through a string.",
                params_schema={"x": "string"},
                mutates={"path": "profile.name.last.deeper", "value": 1},
            ),
        ],
        initial_state={"profile": {"name": {"first": "Ada"}}},
    )
    environment = Environment(slug="crm", name="CRM", template="custom", config=config)
    environment.verifier = verifier_config(
        primitive(
            "named", "state_match", expected={"profile.name.last": "Lovelace", "notes.length": 1, "scores.bob": 2.5}
        )
    )
    env = compile_custom(environment)(Task(instruction="Set things up"))
    env.reset()
    assert play(env, "set_name", {"last": "Lovelace"}) == {"message": "Hello Lovelace", "saved": "Lovelace"}
    assert play(env, "note", {"text": "call back", "priority": 2}) == {"ok": True}
    assert play(env, "score", {"player": "bob", "points": 2.5}) == {"ok": True}
    assert play(env, "break", {"x": "y"}).startswith(
        "error: cannot update the state: profile.name.last is not an object"
    )
    assert env.state == {
        "profile": {"name": {"first": "Ada", "last": "Lovelace"}},
        "notes": [{"text": "call back", "priority": 2}],
        "scores": {"bob": 2.5},
    }
    _, reward, *_ = env.step({"role": "assistant", "content": "done"})
    assert reward == 1.0


def test_llm_judge_needs_a_judge():
    environment = Environment(slug="j", name="J", template="workflow", config=SHOP_CONFIG)
    environment.verifier = verifier_config(primitive("tone", "llm_judge", rubric="Polite."))
    factory = compile_workflow(environment)
    with pytest.raises(ConfigError, match="needs a judge policy"):
        factory(Task(instruction="x"))

    def judge(chat: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": "assistant", "content": '{"score": 1, "reason": "polite"}'}

    env = factory(Task(instruction="x"), judge=judge)
    env.reset()
    _, reward, *_ = env.step({"role": "assistant", "content": "Thank you!"})
    assert reward == 1.0


def test_hostile_arguments_are_data_not_templates():
    env = shop()
    sneaky = "${args.__class__} ${args.amount}"
    result = play(env, "refund", {"order_id": sneaky, "amount": 1})
    assert result["order_id"] == sneaky and env.state["refunds"][0]["order_id"] == sneaky
    assert play(env, "echo", {"text": "${args.text}" * 1000})["you said"] == "${args.text}" * 1000


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"x": "${args.__class__}"}, "unsupported placeholder '${args.__class__}'"),
        ({"x": "${eval('1')}"}, "unsupported placeholder"),
        ({"x": "${args.a"}, "unterminated placeholder"),
    ],
)
def test_hostile_templates_in_env_files_fail_at_load(tmp_path, value, message):
    from rolloutgym.declarative import EnvFileError, resolve_env_file

    path = tmp_path / "hostile_env.json"
    tool = {"kind": "action", "name": "write", "appendTo": "log", "value": value}
    path.write_text(
        json.dumps(
            {
                "slug": "h",
                "name": "H",
                "template": "workflow",
                "config": {"tools": [tool]},
                "tasks": [{"instruction": "x"}],
            }
        )
    )
    with pytest.raises(
        EnvFileError,
        match=r"config.tools\[0\].value: "
        + message.replace("$", r"\$").replace("(", r"\(").replace("{", r"\{").replace("}", r"\}"),
    ):
        resolve_env_file(path)
