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
