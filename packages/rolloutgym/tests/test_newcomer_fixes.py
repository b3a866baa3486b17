"""Small traps a newcomer hit (issue 18): JSON error texts, task files beside the env file, model call ids."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from rolloutgym.declarative import Task
from rolloutgym.llm.parsing import parse_hermes_tool_calls
from rolloutgym_protocol.errors import EnvFileError, json_error_text


@pytest.mark.parametrize(
    "text",
    ['{"a": "unterminated', "{,}", '{"a": 1} extra', "[1, 2", ""],
)
def test_json_error_text_never_says_at_at(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    message = json_error_text(caught.value)
    assert " at at " not in message
    assert f"column {caught.value.colno}" in message


def test_task_from_jsonl_reads_beside_the_env_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_dir = tmp_path / "my_env"
    env_dir.mkdir()
    (env_dir / "tasks.jsonl").write_text(json.dumps({"instruction": "say hi", "id": "t1"}) + "\n")
    (env_dir / "env.py").write_text('from rolloutgym.declarative import Task\nTASKS = Task.from_jsonl("tasks.jsonl")\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    spec = importlib.util.spec_from_file_location("newcomer_env", env_dir / "env.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert [task.instruction for task in module.TASKS] == ["say hi"]


def test_task_from_jsonl_still_reads_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"instruction": "x"}) + "\n" + '{"instruction": "unterminated\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(EnvFileError, match=r"tasks.jsonl:2: not valid JSON \(Unterminated string starting at column"):
        Task.from_jsonl("tasks.jsonl")


def test_a_models_own_tool_call_id_is_kept() -> None:
    text = (
        '<tool_call>\n{"name": "guess", "arguments": {"number": 3}, "id": "functions.guess:0"}\n</tool_call>'
        '<tool_call>\n{"name": "guess", "arguments": {"number": 4}}\n</tool_call>'
    )
    calls, problems, _ = parse_hermes_tool_calls(text)
    assert problems == []
    assert [call["id"] for call in calls] == ["functions.guess:0", "call_1"]


@pytest.mark.parametrize(
    ("keyword", "meant"),
    [("instructions", "instruction"), ("hiddenGroundTruth", "hidden_ground_truth"), ("splt", "split")],
)
def test_a_wrong_task_keyword_names_the_field_meant_and_the_line(keyword: str, meant: str) -> None:
    """Issue 32: ``Task(instructions=...)`` was a bare TypeError without file, line or did-you-mean."""
    from rolloutgym.declarative._task import TaskFieldError

    arguments = {"instruction": "x", keyword: "y"} if keyword != "instructions" else {keyword: "y"}
    with pytest.raises(TaskFieldError) as caught:
        Task(**arguments)
    message = str(caught.value)
    assert f"{__file__}:" in message and f"Did you mean '{meant}'?" in message and "Its fields: instruction" in message
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, EnvFileError)


def test_a_task_without_instruction_says_what_is_missing() -> None:
    with pytest.raises(EnvFileError, match=r"needs an 'instruction'"):
        Task()  # type: ignore[call-arg]
    assert Task("positional", split="train").split == "train"  # positional and keyword use still work


def _play(lines: str) -> tuple[object, str]:
    import asyncio
    import io

    from rolloutgym.builtin.policies import HumanPolicy
    from rolloutgym.registry import get_registry
    from rolloutgym.rollouts import arollout

    out = io.StringIO()
    policy = HumanPolicy(io.StringIO(lines), out)

    async def episode() -> object:
        environment = get_registry().make("toy/guess-v0", task=0)
        try:
            return await arollout(environment, policy, seed=0, max_steps=8)
        finally:
            environment.close()

    try:
        return asyncio.run(episode()), out.getvalue()
    except EOFError:
        return None, out.getvalue()


def test_play_help_and_unknown_commands_are_not_answers() -> None:
    """Issue 32: in ``play``, ``/help`` was taken as the final answer and revealed the target."""
    trajectory, shown = _play('/help\n/hlep\n/call guess {"number": 5}\n/quit\n')
    assert trajectory is None  # /quit stops; nothing was answered
    assert "/call NAME {json arguments}" in shown and "tools: guess" in shown
    assert "unknown command /hlep" in shown and "target was" not in shown
    assert shown.count("[tool]") == 1  # only the /call reached the env


def test_play_double_slash_sends_a_slash_answer() -> None:
    trajectory, shown = _play("//help\n")
    assert trajectory is not None and trajectory.steps[0].action["content"] == "/help"
