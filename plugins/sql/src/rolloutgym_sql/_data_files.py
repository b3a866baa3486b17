"""The data shipped in the package's ``data/`` folder, read and checked on first use.

Task files are JSON Lines: one task per line, one JSON object, validated by a pydantic
model (a missing or unknown field, a wrong type or a repeated id is an error naming the
file, the line and the field). Ground truth is not stored: it is the gold SQL's result on a
fresh copy of the database, computed at grading time.

* ``shop_questions.jsonl``: the questions of ``sql/shop-v0`` (gold SQL, DuckDB spelling
  where it differs, else null).
* ``shop_ops.jsonl``: the data-changing tasks of ``sql/shop-ops-v0`` (gold statements;
  ``nothing_to_do`` marks a task whose right answer is to change nothing).
* ``shop_schema.sql`` and ``shop_vocabulary.json``: the shop database's tables and the
  names, cities, categories and price ranges its generator (``_shop_data.py``) draws from.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel
from rolloutgym.validation import DataRecord, read_json_record, read_jsonl_records

__all__ = [
    "DataRecord",
    "ShopOpRecord",
    "ShopQuestionRecord",
    "ShopVocabulary",
    "data_file",
    "read_json",
    "read_jsonl",
    "shop_ops",
    "shop_questions",
    "shop_schema",
    "shop_vocabulary",
]

Record = TypeVar("Record", bound=BaseModel)


Split = Literal["train", "dev", "test"]
Difficulty = Literal["easy", "medium", "hard"]


class ShopQuestionRecord(DataRecord):
    """One line of ``shop_questions.jsonl``."""

    id: str
    split: Split
    difficulty: Difficulty
    skills: tuple[str, ...]
    instruction: str
    sql: str
    duckdb_sql: str | None


class ShopOpRecord(DataRecord):
    """One line of ``shop_ops.jsonl``."""

    id: str
    split: Split
    difficulty: Difficulty
    skills: tuple[str, ...]
    instruction: str
    statements: tuple[str, ...]
    nothing_to_do: bool


class ShopVocabulary(DataRecord):
    """``shop_vocabulary.json``: what the shop generator draws names, places and prices from."""

    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    cities: tuple[tuple[str, str], ...]  # (city, country)
    categories: dict[str, tuple[str, ...]]  # category -> product nouns
    adjectives: tuple[str, ...]
    price_ranges: dict[str, tuple[int, int]]  # category -> (low, high)
    carriers: tuple[str, ...]
    methods: tuple[str, ...]  # payment methods, repeated by weight
    reasons: tuple[str, ...]  # return reasons
    coupons: tuple[str, ...]


def data_file(name: str) -> Traversable:
    """``data/<name>`` inside the installed package."""
    return resources.files(__package__).joinpath("data", name)


def read_jsonl(source: str | Path | Traversable, model: type[Record]) -> list[Record]:
    """The records of a JSON Lines file (a name in ``data/`` or a path), in file order."""
    return read_jsonl_records(data_file(source) if isinstance(source, str) else source, model)


def read_json(source: str | Path | Traversable, model: type[Record]) -> Record:
    """The one JSON document of a file (a name in ``data/`` or a path)."""
    return read_json_record(data_file(source) if isinstance(source, str) else source, model)


@functools.cache
def shop_questions() -> tuple[ShopQuestionRecord, ...]:
    """The questions of ``sql/shop-v0``, in file order (read once per process)."""
    return tuple(read_jsonl("shop_questions.jsonl", ShopQuestionRecord))


@functools.cache
def shop_ops() -> tuple[ShopOpRecord, ...]:
    """The data-changing tasks of ``sql/shop-ops-v0``, in file order (read once per process)."""
    return tuple(read_jsonl("shop_ops.jsonl", ShopOpRecord))


@functools.cache
def shop_vocabulary() -> ShopVocabulary:
    """The shop generator's vocabulary (read once per process)."""
    return read_json("shop_vocabulary.json", ShopVocabulary)


def shop_schema() -> str:
    """The ``CREATE TABLE``/``CREATE INDEX`` script of the shop database."""
    return data_file("shop_schema.sql").read_text(encoding="utf-8")
