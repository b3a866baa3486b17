"""The task folders in ``data/``: a malformed ``task.json`` is an error naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rolloutgym_code.tasks import load_task_folder
from rolloutgym_protocol.errors import ConfigError

META = {"id": "off-by-one", "split": "train", "instruction": "Fix it.", "category": "bug", "skills": ["reading code"]}


def _folder(tmp_path: Path, meta: dict | str) -> Path:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "module.py").write_text("x = 1\n")
    (tmp_path / "fix").mkdir()
    (tmp_path / "fix" / "module.py").write_text("x = 2\n")
    (tmp_path / "task.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
    return tmp_path


def test_a_good_folder_loads(tmp_path: Path) -> None:
    task = load_task_folder(_folder(tmp_path, META))
    assert (task.id, task.split, task.metadata["skills"]) == ("off-by-one", "train", ["reading code"])
    assert "-x = 1\n+x = 2\n" in task.reference_patch


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({**META, "split": "validation"}, r"task\.json: field 'split': Input should be 'train', 'dev' or 'test'"),
        ({key: value for key, value in META.items() if key != "instruction"}, r"field 'instruction': Field required"),
        ({**META, "skills": "reading code"}, r"field 'skills': Input should be a valid (list|array)"),
        ({**META, "difficulty": "easy"}, r"field 'difficulty': Extra inputs are not permitted"),
        ('{"id": "x",', r"task\.json: not valid JSON"),
    ],
)
def test_a_malformed_task_json_names_the_file_and_field(tmp_path: Path, meta: dict | str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected) as caught:
        load_task_folder(_folder(tmp_path, meta))
    assert str(tmp_path / "task.json") in str(caught.value) and "fix the file" in str(caught.value)
