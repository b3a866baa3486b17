"""The browser data in ``data/``: what ships loads and agrees with itself; a malformed line is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rolloutgym_browser._data_files import (
    MiniWoBTaskRecord,
    ShopCatalogRecord,
    ShopTaskRecord,
    miniwob_task_records,
    read_json,
    read_jsonl,
    shop_catalog,
    shop_task_records,
)
from rolloutgym_protocol.errors import ConfigError


def test_the_shipped_data_loads_and_every_answer_is_the_oracles() -> None:
    tasks, catalog = shop_task_records(), shop_catalog()
    assert (len(tasks), len(miniwob_task_records()), len(catalog.products)) == (31, 125, 22)
    for task in tasks:
        if task.answer is not None:
            assert task.oracle[-1] == {"name": "answer", "arguments": {"text": str(task.answer)}}, task.id
    skus = {product.sku for product in catalog.products}
    ordered = {item["sku"] for order in catalog.initial_state["orders"] for item in order["items"]}
    assert ordered <= skus


def test_a_malformed_task_line_names_the_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "miniwob.jsonl"
    good = {"id": "click-button", "split": "test", "file": "click-button.html", "needs": ["elements"]}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "x", "needs": ["mouse"]}) + "\n")
    with pytest.raises(ConfigError) as caught:
        read_jsonl(path, MiniWoBTaskRecord)
    message = str(caught.value)
    assert f"{path}:2: field 'needs.0'" in message and "'elements'" in message and "fix this line" in message

    first = shop_task_records()[0].model_dump(mode="json")
    del first["expected_state"]
    path.write_text(json.dumps(first) + "\n")
    with pytest.raises(ConfigError, match=r"miniwob\.jsonl:1: field 'expected_state': Field required"):
        read_jsonl(path, ShopTaskRecord)


def test_a_malformed_catalog_names_the_field(tmp_path: Path) -> None:
    catalog = shop_catalog().model_dump(mode="json")
    catalog["products"][3]["price"] = "12.50"
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(catalog))
    with pytest.raises(ConfigError, match=r"catalog\.json: field 'products\.3\.price': Input should be a valid number"):
        read_json(path, ShopCatalogRecord)
