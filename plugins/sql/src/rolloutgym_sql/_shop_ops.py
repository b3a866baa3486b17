"""The data-changing tasks of ``sql/shop-ops-v0``, graded by the database diff.

The tasks are data (``data/shop_ops.jsonl``, one object per line: ``id``, ``split``,
``difficulty``, ``skills``, ``instruction``, ``statements`` (the gold statements) and
``nothing_to_do``). The expected end state is what the gold statements produce on a fresh
copy of the shop database. ``shop-ops-011`` is a task whose right answer is to change
nothing (the customer has no pending order); the null policy passes it, so it is exempt from
the null check.
"""

from __future__ import annotations

from ._data_files import read_jsonl

__all__ = ["NOTHING_TO_DO_TASKS", "SHOP_OPS"]

_ROWS = read_jsonl("shop_ops.jsonl")

NOTHING_TO_DO_TASKS = tuple(row["id"] for row in _ROWS if row.get("nothing_to_do"))

# (id, split, difficulty, skills, instruction, gold statements)
SHOP_OPS: list[tuple[str, str, str, tuple[str, ...], str, tuple[str, ...]]] = [
    (row["id"], row["split"], row["difficulty"], tuple(row["skills"]), row["instruction"], tuple(row["statements"]))
    for row in _ROWS
]
