"""Declarative environments: Task, Environment, builders and shape validation with paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rolloutgym.declarative import (
    EnvFileError,
    Environment,
    Task,
    action_tool,
    browser_config,
    browser_page,
    code_editing_config,
    custom_config,
    custom_tool,
    expand_params_schema,
    interpolate,
    lookup_tool,
    mock_tool,
    primitive,
    verifier_config,
    workflow_config,
)
from rolloutgym.declarative.templating import TemplateError, check_template


def workflow(**overrides):
    tools = overrides.pop(
        "tools",
        [action_tool("refund", state_array="refunds", description="Refund.", params_schema={"order_id": "string"})],
    )
    return Environment(slug="shop", name="Shop", template="workflow", config=workflow_config(tools=tools, **overrides))


def test_builders_produce_the_sdk_shapes():
    assert lookup_tool(
        "get_order", from_array="orders", match_field="id", description="Read.", params_schema={"id": "string"}
    ) == {
        "kind": "lookup",
        "name": "get_order",
        "description": "Read.",
        "paramsSchema": {"id": "string"},
        "fromArray": "orders",
        "matchField": "id",
    }
    assert action_tool("refund", state_array="refunds", description="d") == {
        "kind": "action",
        "name": "refund",
        "description": "d",
        "paramsSchema": {},
        "stateArray": "refunds",
    }
    assert mock_tool("ping", description="d", response={"ok": 1}) == {
        "kind": "mock",
        "name": "ping",
        "description": "d",
        "paramsSchema": {},
        "response": {"ok": 1},
    }
    assert workflow_config(tools=[]) == {"tools": []}
    assert workflow_config(tools=[], fixtures={}, initial_mutable_state={"a": []}, description="x") == {
        "tools": [],
        "description": "x",
        "fixtures": {},
        "initialMutableState": {"a": []},
    }
    assert custom_tool("t", description="d", mutates={"path": "a[]"}) == {
        "name": "t",
        "description": "d",
        "paramsSchema": {},
        "response": None,
        "mutates": {"path": "a[]"},
    }
    assert custom_config(tools=[], initial_state={}) == {"tools": [], "initialState": {}}
    assert code_editing_config(files={"a.py": ""}) == {"files": {"a.py": ""}}
    assert browser_page("/", title="Home", elements=[]) == {"url": "/", "title": "Home", "elements": []}
    assert browser_config(initial_url="/", pages=[]) == {"initialUrl": "/", "pages": []}
    assert primitive("n", "state_match", expected={"a": 1}, weight=2) == {
        "name": "n",
        "type": "state_match",
        "expected": {"a": 1},
        "weight": 2,
    }
    assert verifier_config(primitive("n", "no_tool_errors")) == {
        "primitives": [{"name": "n", "type": "no_tool_errors"}]
    }


def test_sdk_structural_rules():
    with pytest.raises(ValueError, match="requires schema"):
        Environment(slug="s", name="S", template="sql")
    with pytest.raises(ValueError, match="takes schema= .the DDL. and seed="):
        Environment(slug="s", name="S", template="sql", schema="CREATE TABLE t(x)", config={})
    with pytest.raises(ValueError, match="requires config"):
        Environment(slug="s", name="S", template="workflow")
    with pytest.raises(ValueError, match="only for template='sql'"):
        Environment(
            slug="s",
            name="S",
            template="custom",
            config=custom_config(tools=[custom_tool("t", description="d")]),
            seed="INSERT",
        )
    with pytest.raises(EnvFileError, match="template name"):
        Environment(slug="s", name="S", template="Robotics!", config={})
    assert Environment(slug="s", name="S", template="sql", schema="CREATE TABLE t(x INT)").env_id == "file/s-v0"


def test_errors_give_the_path_of_every_problem():
    tools = [
        lookup_tool(
            "get_order", from_array="orders", match_field="id", description="d", params_schema={"id": "string"}
        ),
        action_tool("refund", state_array="refunds", description="d"),
        action_tool(
            "refund2", state_array="refunds", description="d", params_schema={"order_id": "string", "amount": "nubmer"}
        ),
        {"kind": "lookpu", "name": "x"},
        {"kind": "mock", "name": "ping", "respons": 1},
        {"kind": "lookup", "name": "both", "fromArray": "a", "matchField": "id", "fixturePath": "a.${args.id}"},
        {"kind": "mock", "name": "get_order"},
    ]
    with pytest.raises(EnvFileError) as caught:
        workflow(tools=tools)
    message = str(caught.value)
    assert "config.tools[2].paramsSchema.amount: unknown type 'nubmer'. Did you mean 'number'?" in message
    assert "config.tools[3].kind: unknown tool kind 'lookpu'. Did you mean 'lookup'?" in message
    assert "config.tools[4].respons: unknown field 'respons'. Did you mean 'response'?" in message
    assert "config.tools[5]: a lookup tool needs either 'fromArray'" in message
    assert "config.tools[6].name: duplicate tool name 'get_order'" in message
    assert message.startswith("5 problems")


def test_unknown_config_keys_and_fixture_writes_are_rejected():
    with pytest.raises(EnvFileError, match=r"config.fixture: unknown field 'fixture'. Did you mean 'fixtures'\?"):
        Environment(
            slug="s",
            name="S",
            template="workflow",
            config={"tools": [action_tool("a", state_array="x", description="d")], "fixture": {}},
        )
    with pytest.raises(EnvFileError, match="read-only fixture"):
        workflow(tools=[action_tool("a", state_array="orders", description="d")], fixtures={"orders": []})


def test_hostile_templates_are_load_time_errors():
    for template in ("${args.__class__}", "${os.system('ls')}", "${args.x", "${ args.a.__globals__ }"):
        tool = {"kind": "action", "name": "a", "appendTo": "log", "value": {"x": template}}
        with pytest.raises(EnvFileError, match=r"config.tools\[0\].value"):
            workflow(tools=[tool])
    deep: object = "${args.x}"
    for _ in range(40):
        deep = {"k": deep}
    with pytest.raises(EnvFileError, match="nests deeper"):
        workflow(tools=[{"kind": "mock", "name": "m", "response": deep}])


def test_interpolation_keeps_types_and_reports_missing_arguments():
    arguments = {"order_id": "O-1", "amount": 100, "items": [1, 2], "nested": {"a": {"b": True}}}
    assert interpolate({"id": "${args.order_id}", "amount": "${args.amount}"}, arguments) == {
        "id": "O-1",
        "amount": 100,
    }
    assert interpolate("order ${args.order_id} for ${args.amount}", arguments) == "order O-1 for 100"
    assert interpolate("${args.items}", arguments) == [1, 2]
    assert interpolate("${args.nested.a.b}", arguments) is True
    assert interpolate("list ${args.items}", arguments) == "list [1, 2]"
    with pytest.raises(TemplateError, match="missing argument 'reason'"):
        interpolate({"r": "${args.reason}"}, arguments)
    with pytest.raises(TemplateError, match="missing argument 'nested.a.c'"):
        interpolate("${args.nested.a.c}", arguments)
    with pytest.raises(TemplateError, match="unsupported placeholder"):
        interpolate("${args.__class__.__mro__}", arguments)
    huge = "x" * 1_000_000
    assert interpolate("${args.big}", {"big": huge}) is huge
    check_template({"a": ["${args.x}", {"b": "${args.y.z}"}]})


def test_params_schema_expansion():
    assert expand_params_schema({"id": "string", "n": {"type": "integer", "minimum": 1}}) == {
        "type": "object",
        "properties": {"id": {"type": "string"}, "n": {"type": "integer", "minimum": 1}},
        "required": ["id", "n"],
        "additionalProperties": False,
    }
    full = {"type": "object", "properties": {"q": {"type": "string"}}, "required": []}
    assert expand_params_schema(full) == full
    assert expand_params_schema(None)["properties"] == {}


def test_task_fields_split_validation_and_jsonl(tmp_path: Path):
    with pytest.raises(ValueError, match="unknown split 'holdout'"):
        Task(instruction="x", split="holdout")
    with pytest.raises(EnvFileError, match="non-empty"):
        Task(instruction="  ")
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        json.dumps({"instruction": "a", "hidden_ground_truth": {"x": 1}, "split": "train"})
        + "\n\n"
        + json.dumps(
            {"instruction": "b", "hiddenGroundTruth": {"y": 2}, "referenceActions": [{"name": "t", "arguments": {}}]}
        )
        + "\n"
    )
    first, second = Task.from_jsonl(path)
    assert (first.hidden_ground_truth, first.split) == ({"x": 1}, "train")
    assert (second.hidden_ground_truth, second.split, second.reference_actions) == (
        {"y": 2},
        "dev",
        [{"name": "t", "arguments": {}}],
    )
    path.write_text('{"instruction": "a"}\n{"instruction": "b", "split": "holdout"}\n')
    with pytest.raises(EnvFileError, match=r"tasks.jsonl:2: .*unknown split 'holdout'"):
        Task.from_jsonl(path)
    path.write_text('{"instruction": "a"}\n{not json\n')
    with pytest.raises(EnvFileError, match=r"tasks.jsonl:2: not valid JSON"):
        Task.from_jsonl(path)
    path.write_text('{"instruction": "a", "hidden_truth": {}}\n')
    with pytest.raises(EnvFileError, match="unknown task field"):
        Task.from_jsonl(path)


def test_payload_round_trip_keeps_the_verifier():
    environment = workflow()
    environment.verifier = verifier_config(primitive("n", "no_tool_errors"))
    environment.tasks = [
        Task(instruction="Refund O-1", hidden_ground_truth={"refunds": [{"order_id": "O-1"}]}, id="t1")
    ]
    payload = environment.to_payload()
    assert payload["verifier"] == {"primitives": [{"name": "n", "type": "no_tool_errors"}]}
    assert payload["tasks"][0]["hiddenGroundTruth"] == {"refunds": [{"order_id": "O-1"}]}
    assert Task.from_payload(environment.tasks[0].to_dict()) == environment.tasks[0]
    again = Environment.from_payload(json.loads(json.dumps(payload)))
    assert again.to_payload() == payload
    with pytest.raises(EnvFileError, match=r"unknown field\(s\) 'verfier'"):
        Environment.from_payload({**payload, "verfier": {}})


def test_validate_checks_primitive_types_and_parameters():
    environment = workflow()
    environment.verifier = verifier_config(
        primitive("a", "stat_match", expected={"x": 1}),
        primitive("b", "state_match", expected={"x": 1}, foo=2),
        primitive("c", "tool_was_called"),
        primitive("d", "state_match", expected={"a": 1}, weight=-1),
    )
    with pytest.raises(EnvFileError) as caught:
        environment.validate()
    message = str(caught.value)
    assert "verifier.primitives[0].type: unknown primitive type 'stat_match'. Did you mean 'state_match'?" in message
    assert "verifier.primitives[1] (state_match): foo: unknown parameter" in message
    assert "verifier.primitives[2] (tool_was_called): tool: required field is missing" in message
    assert "verifier.primitives[3].weight: must be finite and >= 0" in message
    environment.verifier = {"primitives": []}
    with pytest.raises(EnvFileError, match="non-empty list of primitives"):
        environment.validate()


def test_compiled_templates_match_interpolation():
    from rolloutgym.declarative.templating import compile_template

    template = {
        "id": "${args.order_id}",
        "note": "refund of ${args.amount}",
        "deep": ["${args.nested.a}", 3, None],
        "${args.order_id}": 1,
    }
    arguments = {"order_id": "O-1", "amount": 100, "nested": {"a": [1]}}
    assert (
        compile_template(template)(arguments)
        == interpolate(template, arguments)
        == {"id": "O-1", "note": "refund of 100", "deep": [[1], 3, None], "O-1": 1}
    )
    with pytest.raises(TemplateError, match="missing argument 'order_id'"):
        compile_template({"id": "${args.order_id}"})({})
    with pytest.raises(TemplateError, match="unsupported placeholder"):
        compile_template("${args.__dict__}")
