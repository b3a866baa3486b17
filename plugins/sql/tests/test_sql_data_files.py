"""The shop data in ``data/``: what ships loads, and a malformed line is named with its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rolloutgym_protocol.errors import ConfigError
from rolloutgym_sql._data_files import (
    ShopOpRecord,
    ShopQuestionRecord,
    ShopVocabulary,
    read_json,
    read_jsonl,
    shop_ops,
    shop_questions,
    shop_vocabulary,
)

QUESTION = {
    "id": "shop-001",
    "split": "train",
    "difficulty": "easy",
    "skills": ["count"],
    "instruction": "How many customers are there?",
    "sql": "SELECT COUNT(*) FROM customers",
    "duckdb_sql": None,
}


def _write(tmp_path: Path, *lines: dict | str) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def test_the_shipped_data_loads() -> None:
    assert (len(shop_questions()), len(shop_ops())) == (55, 13)
    assert [record.id for record in shop_ops() if record.nothing_to_do] == ["shop-ops-011"]
    assert len(shop_vocabulary().categories) == 8


def test_a_wrong_type_names_the_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, QUESTION, {**QUESTION, "id": "shop-002", "skills": "count"})
    with pytest.raises(ConfigError) as caught:
        read_jsonl(path, ShopQuestionRecord)
    message = str(caught.value)
    assert f"{path}:2: field 'skills'" in message and "fix this line" in message


def test_a_missing_field_an_unknown_value_and_a_repeated_id(tmp_path: Path) -> None:
    operation = {key: value for key, value in QUESTION.items() if key not in ("sql", "duckdb_sql")}
    with pytest.raises(ConfigError, match=r"questions\.jsonl:1: field 'statements': Field required"):
        read_jsonl(_write(tmp_path, {**operation, "nothing_to_do": False}), ShopOpRecord)
    with pytest.raises(ConfigError, match=r"questions\.jsonl:1: field 'difficulty': Input should be 'easy'"):
        read_jsonl(_write(tmp_path, {**QUESTION, "difficulty": "trivial"}), ShopQuestionRecord)
    with pytest.raises(ConfigError, match=r"questions\.jsonl:2: field 'id': 'shop-001' is already the id of line 1"):
        read_jsonl(_write(tmp_path, QUESTION, QUESTION), ShopQuestionRecord)


def test_a_broken_document_is_named(tmp_path: Path) -> None:
    path = tmp_path / "vocabulary.json"
    path.write_text(json.dumps({"first_names": ["Ana"]}))
    with pytest.raises(ConfigError, match=r"vocabulary\.json: field 'last_names': Field required; fix the file"):
        read_json(path, ShopVocabulary)
