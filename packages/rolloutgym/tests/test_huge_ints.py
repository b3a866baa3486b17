"""Integers past Python's int-to-text limit in the engine, graders, parsers, logs and run files (issue 26, class 3).

``str(7 * 10**5000)`` raises; so do ``repr``, f-strings and ``json.dumps`` of anything
holding such an int, and ``json.loads`` of a 5000-digit number. None of that may end an
episode as an env error, lose a log line, or stop ``rolloutgym show``/``report``/``export``;
and when an env does raise, the action it raised on is in the run file.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from rolloutgym import arollout_group, rollout_group
from rolloutgym.cli import app
from rolloutgym.declarative import interpolate
from rolloutgym.llm.configs import parse_fenced_tool_calls
from rolloutgym.llm.messages import from_openai_message, to_openai_messages
from rolloutgym.llm.parsing import parse_hermes_tool_calls
from rolloutgym.registry import get_registry
from rolloutgym.runs import RunWriter, read_run
from rolloutgym.serve._run import JsonLogFormatter
from rolloutgym.verifiers import describe_value, state_diff, values_match
from rolloutgym_protocol.display import int_text
from typer.testing import CliRunner

HUGE = 7 * 10**5000
SHOWN = int_text(HUGE)  # "about 7.00000e+5000 (an integer too long to print)"
DIGITS = "9" * 5000


def _guess(number: Any, call_id: str = "c") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "name": "guess", "arguments": {"number": number}}],
    }


class RaisesOnHugeIntegers(gym.Wrapper):
    """``toy/guess-v0`` whose step raises, as a buggy env would, on an action holding a huge int."""

    def step(self, action: Any) -> Any:
        if _holds_huge(action):
            raise KeyError(HUGE)  # its message cannot even be printed
        return self.env.step(action)


def _holds_huge(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() > 10_000
    if isinstance(value, dict):
        return any(_holds_huge(key) or _holds_huge(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return any(_holds_huge(item) for item in value)
    return False


def _make(item: Any) -> gym.Env:
    return RaisesOnHugeIntegers(get_registry().make("toy/guess-v0", task=item))


FAILING_ACTIONS = {
    "huge": _guess(HUGE),
    "negative huge": _guess(-HUGE),
    "in a list": _guess([1, HUGE]),
    "as a key": _guess({HUGE: "x"}),
    "nested": {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "name": "guess", "arguments": {"a": {"b": [-HUGE]}}}],
    },
}


class Scripted:
    def __init__(self, actions: list[Any]) -> None:
        self.actions = actions

    def for_env(self, environment: Any) -> Any:
        actions = iter(self.actions)
        return lambda observation: next(actions)


@pytest.mark.parametrize("action", list(FAILING_ACTIONS.values()), ids=list(FAILING_ACTIONS))
def test_an_env_error_records_the_action_that_caused_it(action: Any) -> None:
    policy = Scripted([_guess(10, "c0"), _guess(90, "c1"), action])
    sync = rollout_group(0, _make, policy, num_rollouts=1)
    remote = asyncio.run(arollout_group(0, _make, policy, num_rollouts=2))
    for error in (sync.errors[0], *remote.errors):
        assert error.where == "env" and error.error_type == "KeyError" and error.step == 2
        assert error.action == action
        assert error.partial is not None and [step.action for step in error.partial.steps] == policy.actions[:2]


def _header(task_ids: list[str]) -> dict[str, Any]:
    return {
        "kind": "header",
        "format_version": 1,
        "run_id": "huge",
        "created_at": "2026-01-01T00:00:00+00:00",
        "env": {"id": "toy/guess-v0"},
        "policy": "scripted",
        "num_rollouts": 2,
        "tasks": task_ids,
        "task_indices": list(range(len(task_ids))),
        "options": {"env_kwargs": {"amount": HUGE}},
    }


@pytest.fixture(scope="module")
def huge_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run file of toy/guess-v0: one group whose members fail on a huge int, one that finishes with them."""
    path = tmp_path_factory.mktemp("huge") / "huge.jsonl"
    registry = get_registry()
    failing = asyncio.run(arollout_group(0, _make, Scripted([_guess(50), FAILING_ACTIONS["nested"]]), num_rollouts=2))
    finishing = rollout_group(
        1,
        lambda item: registry.make("toy/guess-v0", task=item),
        Scripted([{"role": "assistant", "content": HUGE}, {"role": "assistant", "content": [-HUGE]}]),
        num_rollouts=2,
        max_steps=1,
        metadata={"note": {HUGE: [HUGE]}},
    )
    with RunWriter(path, _header([failing.item_id, finishing.item_id])) as writer:
        writer.write_group(0, failing)
        writer.write_group(1, finishing)
    return path


def test_the_run_file_keeps_every_digit_of_actions_and_failing_actions(huge_run: Path) -> None:
    for line in huge_run.read_text(encoding="utf-8").splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(f"non-strict JSON token {name}"))
    groups = read_run(huge_run).groups
    assert [error.action for error in groups[0].errors] == [FAILING_ACTIONS["nested"]] * 2
    assert groups[1].trajectories[0].actions[0] == {"role": "assistant", "content": HUGE}
    assert list(groups[1].trajectories[0].metadata["note"].values()) == [[HUGE]]  # keys are text, as in JSON


@pytest.mark.parametrize(
    "command",
    [["show"], ["show", "--json"], ["show", "--errors"], ["report", "-o", "{dir}/report.html"]],
    ids=["show", "show-json", "show-errors", "report"],
)
def test_show_and_report_read_a_run_with_huge_integers(huge_run: Path, command: list[str]) -> None:
    arguments = [part.format(dir=huge_run.parent) for part in command]
    result = CliRunner().invoke(app, [arguments[0], str(huge_run), *arguments[1:]])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    if arguments[0] == "show" and "--json" not in arguments:
        assert "errors 2" in result.output and "KeyError" in result.output
    if "--errors" in arguments:  # each failed member, with the action its env raised on
        assert result.output.count("at step 1, on the action") == 2, result.output


def test_export_writes_a_run_with_huge_integers(huge_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.sft.jsonl"
    command = ["export", str(huge_run), "--format", "sft", "--option", "min_score=0", "--out", str(target)]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert rows and SHOWN in json.dumps(rows)


def test_state_diffs_and_feedback_name_huge_integers() -> None:
    expected = {"refunds": [{"order_id": "O-1", "amount": 100.0}], "total": HUGE, "count": 3}
    actual = {"refunds": [{"order_id": "O-1", "amount": HUGE}], "total": -HUGE, "count": HUGE}
    lines = state_diff(expected, actual)
    assert lines == [
        f"refunds[0].amount: expected 100.0, got {SHOWN}",
        f"total: expected {SHOWN}, got {int_text(-HUGE)}",
        f"count: expected 3, got {SHOWN}",
    ]
    assert values_match({"a": [HUGE]}, {"a": [HUGE]}) and not values_match({"a": HUGE}, {"a": HUGE + 1})
    assert not values_match({"a": 1.0}, {"a": HUGE}, tolerance=1e300)
    assert not values_match({HUGE: 1}, {"x": 1})
    assert describe_value({"amount": [HUGE]}) == '{"amount": ["about 7.00000e+5000 (an integer too long to print)"]}'
    assert interpolate("refund ${args.amount}", {"amount": HUGE}) == f'refund "{SHOWN}"'


NOT_JSON = "not valid JSON (a number has more than 4300 digits)"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            f'<tool_call>{{"name": "guess", "arguments": {{"number": {DIGITS}}}}}</tool_call>',
            f"tool call 0: {NOT_JSON}",
        ),
        (
            f'<tool_call>{{"name": "guess", "arguments": "{{\\"number\\": -{DIGITS}}}"}}</tool_call>',
            "tool call 0 (guess): 'arguments' must be a JSON object",
        ),
        (f'<tool_call>{{"name": "guess", "arguments": {{"n": [{DIGITS}]}}}}</tool_call>', f"tool call 0: {NOT_JSON}"),
    ],
    ids=["number", "arguments as text", "in a list"],
)
def test_a_model_writing_a_5000_digit_number_gets_an_invalid_action_not_a_crash(text: str, problem: str) -> None:
    calls, problems, _ = parse_hermes_tool_calls(text)
    assert problems == [problem] and calls[0]["arguments"] == {}
    fenced = "```json\n" + text.removeprefix("<tool_call>").removesuffix("</tool_call>") + "\n```"
    fenced_calls, _ = parse_fenced_tool_calls(fenced)  # a block that is not JSON stays text
    assert all(isinstance(call["arguments"], str) for call in fenced_calls)  # text arguments: an invalid action


def test_openai_tool_arguments_with_a_5000_digit_number_are_an_invalid_action() -> None:
    function = {"name": "guess", "arguments": f'{{"number": {DIGITS}}}'}
    message, problems = from_openai_message(
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": function}]}
    )
    assert message["tool_calls"][0]["arguments"] == {}
    assert problems == [f"tool call 0 (guess): arguments are {NOT_JSON}"]


def test_messages_with_huge_integers_convert_to_the_wire_shape() -> None:
    wire = to_openai_messages(
        [_guess(HUGE), {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": HUGE}]}]
    )
    assert json.loads(wire[0]["tool_calls"][0]["function"]["arguments"]) == {"number": SHOWN}
    assert wire[1]["content"] == SHOWN


def test_a_log_line_with_huge_integers_is_written() -> None:
    record = logging.LogRecord("rolloutgym.serve", logging.WARNING, __file__, 1, "step %s of %d", (HUGE, HUGE), None)
    record.session = {"amount": HUGE, HUGE: "key"}
    line = json.loads(JsonLogFormatter().format(record))
    assert SHOWN in line["message"] and line["session"] == {"amount": SHOWN, SHOWN: "key"}
    plain = logging.LogRecord("rolloutgym.serve", logging.INFO, __file__, 1, "step %s", (3,), None)
    assert json.loads(JsonLogFormatter().format(plain))["message"] == "step 3"


def test_the_server_answers_a_body_with_a_5000_digit_number_with_a_400() -> None:
    from rolloutgym.serve.app import ServeConfig, create_app
    from starlette.testclient import TestClient

    with TestClient(create_app(ServeConfig(["toy/guess-v0"]))) as client:
        answer = client.post("/sessions", content=f'{{"env": "toy/guess-v0", "seed": {DIGITS}}}')
        assert answer.status_code == 400
        assert answer.json()["error"]["message"] == "request body is not valid JSON: a number has more than 4300 digits"
