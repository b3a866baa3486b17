"""Dataset and RLDataset: sequence behaviour, transformations, item ids, Hugging Face interop."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from rolloutgym.datasets import Dataset, RLDataset


def make_rl_dataset(**kwargs: Any) -> RLDataset[dict[str, Any]]:
    items = ({"id": f"q{index}", "question": f"{index} + 1", "answer": index + 1} for index in range(4))
    return RLDataset(items, {"split": "test"}, make_env=lambda item: ("env", item["id"]), **kwargs)


def test_dataset_is_an_immutable_sequence() -> None:
    dataset = Dataset(iter([10, 20, 30, 20]), {"name": "numbers"})
    assert isinstance(dataset, Sequence)
    assert dataset.items == (10, 20, 30, 20)
    assert len(dataset) == 4 and dataset[1] == 20 and dataset[-1] == 20
    assert dataset[1:3] == (20, 30)
    assert list(dataset) == [10, 20, 30, 20]
    assert 30 in dataset and dataset.index(30) == 2 and dataset.count(20) == 2
    assert list(reversed(dataset)) == [20, 30, 20, 10]
    with pytest.raises(dataclasses.FrozenInstanceError):
        dataset.items = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(dataset)
    assert not hasattr(dataset, "__dict__")


def test_dataset_copies_metadata() -> None:
    metadata = {"name": "numbers"}
    dataset = Dataset([1], metadata)
    metadata["name"] = "changed"
    assert dataset.metadata == {"name": "numbers"}


def test_dataset_transformations_keep_metadata() -> None:
    dataset = Dataset(range(5), {"name": "numbers"})
    doubled = dataset.map(lambda item: item * 2)
    assert doubled == Dataset((0, 2, 4, 6, 8), {"name": "numbers"})
    assert dataset.filter(lambda item: item % 2).items == (1, 3)
    assert dataset.take(2).items == (0, 1)
    assert dataset.take(None) == dataset
    assert dataset.take(0).items == ()
    tagged = dataset.with_metadata(split="train")
    assert tagged.metadata == {"name": "numbers", "split": "train"}
    assert dataset.metadata == {"name": "numbers"}
    with pytest.raises(ValueError, match="limit must be non-negative"):
        dataset.take(-1)


def test_dataset_item_id_is_the_position() -> None:
    dataset = Dataset(["a", "b", "c"])
    assert [dataset.item_id(index) for index in range(3)] == ["0", "1", "2"]
    assert dataset.item_id(-1) == "2"
    with pytest.raises(IndexError, match="out of range"):
        dataset.item_id(3)


def test_rl_dataset_requires_make_env_by_keyword() -> None:
    with pytest.raises(TypeError, match="make_env"):
        RLDataset([1, 2])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="make_env must be callable"):
        RLDataset([1, 2], make_env="not callable")  # type: ignore[arg-type]


def test_rl_dataset_item_id_without_get_item_id_is_the_index() -> None:
    dataset = make_rl_dataset()
    assert dataset.item_id(0) == "0"
    assert dataset.item_id(3) == "3"


def test_rl_dataset_item_id_uses_get_item_id() -> None:
    dataset = make_rl_dataset(get_item_id=lambda item: item["id"])
    assert [dataset.item_id(index) for index in range(len(dataset))] == ["q0", "q1", "q2", "q3"]


def test_rl_dataset_make_env_is_the_stored_callable() -> None:
    dataset = make_rl_dataset()
    assert dataset.make_env(dataset[2]) == ("env", "q2")


def test_rl_dataset_transformations_stay_rl_datasets() -> None:
    dataset = make_rl_dataset(get_item_id=lambda item: item["id"])
    results = [
        dataset.map(lambda item: {**item, "question": item["question"].upper()}),
        dataset.filter(lambda item: item["answer"] > 2),
        dataset.take(2),
        dataset.with_metadata(version=2),
    ]
    for result in results:
        assert isinstance(result, RLDataset)
        assert result.make_env is dataset.make_env
        assert result.get_item_id is dataset.get_item_id
        assert result.metadata["split"] == "test"
    assert results[1].item_id(0) == "q2"
    assert results[3].metadata == {"split": "test", "version": 2}


def test_from_hf_and_to_hf_round_trip() -> None:
    hf_datasets = pytest.importorskip("datasets")
    rows = [{"question": "1 + 1", "answer": "2"}, {"question": "2 + 2", "answer": "4"}]
    hf_dataset = hf_datasets.Dataset.from_list(rows, split="test")
    dataset = Dataset.from_hf(hf_dataset, metadata={"name": "tiny"})
    assert dataset.items == tuple(rows)
    assert dataset.metadata == {"name": "tiny", "hf_split": "test"}
    back = dataset.to_hf()
    assert isinstance(back, hf_datasets.Dataset)
    assert back.to_list() == rows

    rl_dataset = RLDataset.from_hf(hf_dataset, make_env=lambda item: item["question"])
    assert isinstance(rl_dataset, RLDataset)
    assert rl_dataset.make_env(rl_dataset[1]) == "2 + 2"


def test_from_hf_rejects_dataset_dicts_and_other_objects() -> None:
    hf_datasets = pytest.importorskip("datasets")
    dataset_dict = hf_datasets.DatasetDict({"train": hf_datasets.Dataset.from_list([{"x": 1}])})
    with pytest.raises(TypeError, match="pass dataset\\[split\\]"):
        Dataset.from_hf(dataset_dict)
    with pytest.raises(TypeError, match="got list"):
        Dataset.from_hf([{"x": 1}])


def test_to_hf_requires_mapping_items() -> None:
    pytest.importorskip("datasets")
    with pytest.raises(TypeError, match="item 1 is int"):
        Dataset([{"x": 1}, 2]).to_hf()


def test_hf_interop_without_the_library_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(ImportError, match=r"pip install '\S*packages/rolloutgym\[datasets\]'"):
        Dataset.from_hf(object())
    with pytest.raises(ImportError, match=r"RLDataset.to_hf .*rolloutgym\[datasets\]"):
        make_rl_dataset().to_hf()


def test_importing_the_module_does_not_import_hugging_face_datasets() -> None:
    code = "import sys, rolloutgym.datasets; print('datasets' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "False"
