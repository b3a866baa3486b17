"""The data shipped in the package's ``data/`` folder, read and checked on first use.

Task files are JSON Lines: one task per line, one JSON object, validated by a pydantic
model (a missing or unknown field, a wrong type or a repeated id is an error naming the
file, the line and the field).

* ``shop_tasks.jsonl``: the tasks of ``browser/shop-v0``: instruction, start page, setup,
  the reference solution (``oracle``), the answer and the expected end state, which is the
  replay of the reference solution on a fresh site (``python -m rolloutgym_browser.shop
  --check`` verifies it; without ``--check`` it rewrites the expected states).
* ``shop_catalog.json``: the shop's products and its server-side state at the start of an
  episode (past orders, the account).
* ``miniwob_tasks.jsonl``: the task list of ``miniwob`` 1.1.0's gymnasium registration
  (``miniwob/registration.py``; ``flight.*`` excluded: they are FlightWoB, not MiniWoB).
  ``needs`` is hand-classified from each task page: ``elements`` = the element ids suffice;
  ``coordinates`` = ``click_at`` on a canvas/SVG position; ``drag`` = the drag tool;
  ``keyboard`` = ``press_key``; ``scroll`` = the page scrolls.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel
from rolloutgym.validation import DataRecord, read_json_record, read_jsonl_records

__all__ = [
    "DataRecord",
    "MiniWoBTaskRecord",
    "ProductRecord",
    "ShopCatalogRecord",
    "ShopTaskRecord",
    "data_file",
    "miniwob_task_records",
    "read_json",
    "read_jsonl",
    "shop_catalog",
    "shop_task_records",
]

Record = TypeVar("Record", bound=BaseModel)


class ShopTaskRecord(DataRecord):
    """One line of ``shop_tasks.jsonl`` (field order = the file's key order)."""

    id: str
    split: Literal["train", "dev", "test"]
    skills: tuple[str, ...]
    instruction: str
    start_url: str
    setup: dict[str, Any]
    oracle: tuple[dict[str, Any], ...]  # tool calls: {"name": ..., "arguments": {...}}
    answer: str | int | float | None  # None: the task is graded by the end state only
    expected_state: dict[str, Any]


class ProductRecord(DataRecord):
    sku: str
    name: str
    category: str
    price: float
    stock: int
    rating: float
    description: str


class ShopCatalogRecord(DataRecord):
    """``shop_catalog.json``."""

    products: tuple[ProductRecord, ...]
    initial_state: dict[str, Any]  # cart, orders, account, tickets


class MiniWoBTaskRecord(DataRecord):
    """One line of ``miniwob_tasks.jsonl``."""

    id: str
    split: Literal["train", "dev", "test"]
    file: str
    needs: tuple[Literal["elements", "coordinates", "drag", "keyboard", "scroll"], ...]


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
def shop_task_records() -> tuple[ShopTaskRecord, ...]:
    """The tasks of ``browser/shop-v0``, in file order (read once per process)."""
    return tuple(read_jsonl("shop_tasks.jsonl", ShopTaskRecord))


@functools.cache
def shop_catalog() -> ShopCatalogRecord:
    """The shop's products and initial state (read once per process)."""
    return read_json("shop_catalog.json", ShopCatalogRecord)


@functools.cache
def miniwob_task_records() -> tuple[MiniWoBTaskRecord, ...]:
    """The MiniWoB++ task list, in file order (read once per process)."""
    return tuple(read_jsonl("miniwob_tasks.jsonl", MiniWoBTaskRecord))
