"""Data sources: examples, local files and folders, the hub (unreachable here: it must fail at once)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from rolloutgym_benchmarks import DatasetUnavailable, MathExample, aime, gsm8k, gsm8k_examples, make, make_example_id
from rolloutgym_benchmarks.benchmarks import _cached_tasks, aime_tasks, gsm8k_tasks
from rolloutgym_protocol.errors import ConfigError

ROWS = [
    {"question": "What is 2 + 3?", "answer": "2 + 3 = <<2+3=5>>5\n#### 5"},
    {"question": "What is 10 - 4?", "answer": "#### 6"},
]


def test_default_is_the_shipped_sample() -> None:
    benchmark = gsm8k()
    assert benchmark.name == "gsm8k"
    assert len(benchmark.items) >= 30
    assert benchmark.metadata == {"dataset": "sample:gsm8k_sample.jsonl", "split": "test", "task": "single_turn_math"}
    assert aime().name == "aime" and len(aime().items) >= 15


def test_rows_like_rolloutlib() -> None:
    examples = gsm8k_examples(
        [{"question": "Q?", "answer": 42, "id": 7, "source": "x"}, MathExample(question="R?", answer="1")]
    )
    assert examples[0] == MathExample(question="Q?", answer="42", example_id="7", metadata={"source": "x"})
    assert examples[1].example_id == make_example_id("gsm8k", "R?")
    assert make_example_id("gsm8k", " R? ") == make_example_id("gsm8k", "R?")
    assert (
        make_example_id("gsm8k", "R?").startswith("gsm8k:")
        and len(make_example_id("gsm8k", "R?")) == len("gsm8k:") + 16
    )
    with pytest.raises(ValueError, match="no answer"):
        gsm8k([{"question": "Q?"}])
    with pytest.raises(ValueError, match="no question"):
        gsm8k([{"answer": "1"}])
    with pytest.raises(ValueError, match="at most one"):
        gsm8k(ROWS, path="x.jsonl")


def test_aime_keys_and_range() -> None:
    benchmark = aime([{"problem": "P?", "ground_truth": 7}])
    assert benchmark.items[0].answer == "7"
    with pytest.raises(ValueError, match="0 to 999"):
        aime([{"problem": "P?", "answer": 1000}])
    with pytest.raises(ValueError, match="0 to 999"):
        aime([{"problem": "P?", "answer": "1/2"}])


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_local_files(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"gsm8k{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    elif suffix == ".json":
        path.write_text(json.dumps(ROWS))
    else:
        path.write_text("question,answer\n" + "".join(f'"{row["question"]}","{row["answer"]}"\n' for row in ROWS))
    benchmark = gsm8k(path=path)
    assert [item.question for item in benchmark.items] == [row["question"] for row in ROWS]
    assert benchmark.metadata["dataset"] == str(path)
    environment = benchmark.make_env(benchmark.items[0])
    environment.reset(seed=0)
    assert environment.step(environment.oracle_action())[1] == 1.0


def test_datasets_folder(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "saved"))
    assert [item.answer for item in gsm8k(path=tmp_path / "saved").items] == [row["answer"] for row in ROWS]


def test_bad_local_data_names_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        gsm8k(path=tmp_path / "missing.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "Q", "answer": "1"}\nnot json\n')
    with pytest.raises(ConfigError, match="line 2"):
        gsm8k(path=broken)
    with pytest.raises(ConfigError, match="unknown file type"):
        (tmp_path / "data.txt").write_text("x")
        gsm8k(path=tmp_path / "data.txt")


def test_unreachable_hub_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    start = time.monotonic()
    with pytest.raises(DatasetUnavailable, match="path=") as caught:
        gsm8k(dataset="openai/gsm8k")
    assert time.monotonic() - start < 10
    assert "openai/gsm8k" in str(caught.value) and "unreachable" in str(caught.value)
    with pytest.raises(ConnectionError):
        make("aime", dataset="MathArena/aime_2025")


def test_make_and_registry() -> None:
    assert make("gsm8k", ROWS).name == "gsm8k"
    with pytest.raises(ValueError, match=r"unknown benchmark 'mmlu'; choose from \['aime', 'gsm8k'\]"):
        make("mmlu")


def test_registered_env_reads_the_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({**row, "split": "test"}) + "\n" for row in ROWS))
    monkeypatch.setenv("ROLLOUTGYM_BENCH_GSM8K", str(path))
    try:
        assert [task.question for task in gsm8k_tasks()] == [row["question"] for row in ROWS]
    finally:
        _cached_tasks.cache_clear()
    monkeypatch.setenv("ROLLOUTGYM_BENCH_AIME", str(path))
    try:
        with pytest.raises(ValueError, match="0 to 999"):  # GSM8K solutions are not AIME answers
            aime_tasks()
    finally:
        _cached_tasks.cache_clear()
