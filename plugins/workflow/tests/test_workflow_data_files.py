"""The refund task data in ``data/``: what ships loads, and a malformed line is named with its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_workflow._data_files import RefundTaskRecord, read_jsonl, refund_task_records, refund_world


def _good_line(task_id: str = "full_refund-1") -> dict:
    return {
        "id": task_id,
        "split": "train",
        "instruction": "Please refund order O-5001.",
        "reference_actions": [{"name": "get_order", "arguments": {"order_id": "O-5001"}}],
        "reference_answer": "Refunded.",
        "metadata": {"family": "full_refund", "skills": ["refund"], "answer_terms": []},
    }


def _write(tmp_path: Path, *records: dict | str) -> Path:
    path = tmp_path / "tasks.jsonl"
    lines = [record if isinstance(record, str) else json.dumps(record) for record in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_shipped_task_files_load_with_their_worlds() -> None:
    tasks, conversations = refund_task_records("refund"), refund_task_records("refund_conv")
    assert (len(tasks), len(conversations)) == (49, 40)
    assert all(task.user is None for task in tasks) and all(task.user for task in conversations)
    world = refund_world("refund")
    planted = {
        action["arguments"]["order_id"]
        for task in tasks
        for action in task.reference_actions
        if action.get("name") == "get_order"
    }
    assert planted and planted <= set(world["orders"]), "every order a reference action reads is in the world"


def test_a_wrong_field_names_the_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, _good_line(), {**_good_line("cancel-1"), "split": "validation"})
    with pytest.raises(ConfigError) as caught:
        read_jsonl(path, RefundTaskRecord)
    message = str(caught.value)
    assert f"{path}:2" in message and "field 'split'" in message and "'train', 'dev' or 'test'" in message


def test_a_missing_nested_field_and_an_unknown_field_are_named(tmp_path: Path) -> None:
    line = _good_line()
    del line["metadata"]["family"]
    with pytest.raises(ConfigError, match=r"tasks\.jsonl:1: field 'metadata\.family': Field required"):
        read_jsonl(_write(tmp_path, line), RefundTaskRecord)
    with pytest.raises(ConfigError, match=r"tasks\.jsonl:1: field 'answer': Extra inputs are not permitted"):
        read_jsonl(_write(tmp_path, {**_good_line(), "answer": "x"}), RefundTaskRecord)


def test_broken_json_and_a_repeated_id_name_the_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tasks\.jsonl:2: not valid JSON .*fix this line"):
        read_jsonl(_write(tmp_path, _good_line(), '{"id": "cancel-1",'), RefundTaskRecord)
    with pytest.raises(ConfigError, match=r"tasks\.jsonl:3: field 'id': 'full_refund-1' is already the id of line 1"):
        read_jsonl(_write(tmp_path, _good_line(), _good_line("x-1"), _good_line()), RefundTaskRecord)
