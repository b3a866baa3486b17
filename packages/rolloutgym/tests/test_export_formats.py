"""Every training-data export format, written from real run files and read back."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from rolloutgym.builtin.toy import guess_tasks
from rolloutgym.llm import CharRenderer, ScriptedSampler, TokenPolicy
from rolloutgym.registry import get_registry, import_entry_point
from rolloutgym.runner import run
from rolloutgym.runs import read_run
from rolloutgym_protocol.errors import ConfigError

RENDERER = CharRenderer()


def _arith_reply_factory():
    seen: Counter[tuple[int, ...]] = Counter()

    def reply(prompt: Sequence[int], index: int) -> str:
        """Right on the first try of each task, off by one on the second."""
        a, operator, b = re.search(r"What is (\d+) ([-+*]) (\d+)", RENDERER.decode(prompt)).groups()
        value = {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[operator]
        seen[tuple(prompt)] += 1
        return f"<think>computing</think>{value if seen[tuple(prompt)] % 2 else value + 1}"

    return reply


@pytest.fixture(scope="module")
def arith_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "arith.jsonl"
    sampler = ScriptedSampler(RENDERER.encode, _arith_reply_factory(), end_token_id=CharRenderer.END)
    policy = TokenPolicy(sampler, RENDERER)
    run("toy/arith-v0", policy="scripted", policy_object=policy, num_rollouts=2, limit=3, concurrency=1, out=out)
    return out


@pytest.fixture(scope="module")
def guess_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "guess.jsonl"

    def reply(prompt: Sequence[int], index: int) -> str:
        """Binary search on the hints seen so far."""
        text = RENDERER.decode(prompt)
        low, high = map(int, re.search(r"between (\d+) and (\d+)", text).groups())
        guesses = [int(value) for value in re.findall(r'"number": (\d+)', text.split("assistant\n", 1)[-1])]
        for guess, hint in zip(guesses, re.findall(r"tool\n(higher|lower)", text), strict=False):
            low, high = (guess + 1, high) if hint == "higher" else (low, guess - 1)
        return f'<tool_call>{{"name": "guess", "arguments": {{"number": {(low + high) // 2}}}}}</tool_call>'

    policy = TokenPolicy(ScriptedSampler(RENDERER.encode, reply, end_token_id=CharRenderer.END), RENDERER)
    run("toy/guess-v0", policy="scripted", policy_object=policy, limit=2, out=out)
    return out


def export(run_file: Path, format_name: str, out: Path, **options) -> Path:
    spec = get_registry().exporter(format_name)
    return import_entry_point(spec.entry_point)(read_run(run_file), out, **options)


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_tokens_export(arith_run: Path, tmp_path: Path) -> None:
    rows = read_lines(export(arith_run, "tokens", tmp_path / "t.jsonl"))
    assert len(rows) == 6
    run_data = read_run(arith_run)
    for row in rows:
        assert len(row["input_ids"]) == len(row["loss_mask"]) == len(row["logprobs"])
        start, end = row["turn_spans"][0]
        assert set(row["loss_mask"][start:end]) == {1} and set(row["loss_mask"][:start]) == {0}
        assert all(value == -0.5 for value in row["logprobs"][start:end])
        group = next(g for g in run_data.groups if g.item_id == row["task_id"])
        assert RENDERER.decode(row["input_ids"]).endswith(
            group.trajectories[row["member"]].steps[0].policy_info["text"]
        )
    by_task: dict[str, list[dict]] = {}
    for row in rows:
        by_task.setdefault(row["task_id"], []).append(row)
    for members in by_task.values():
        assert sorted(row["reward"] for row in members) == [0.0, 1.0]
        assert sum(row["advantage"] for row in members) == pytest.approx(0.0)
        assert {row["advantage"] for row in members} == {0.5, -0.5}
    normalized = read_lines(export(arith_run, "tokens", tmp_path / "n.jsonl", normalize_advantages=True))
    assert {row["advantage"] for row in normalized} == {1.0, -1.0}


def test_tinker_export_is_datum_shaped(arith_run: Path, tmp_path: Path) -> None:
    tokens = read_lines(export(arith_run, "tokens", tmp_path / "t.jsonl"))
    datums = read_lines(export(arith_run, "tinker", tmp_path / "d.jsonl"))
    assert len(datums) == len(tokens)
    for datum, row in zip(datums, tokens, strict=True):
        chunk = datum["model_input"]["chunks"][0]
        assert chunk["type"] == "encoded_text" and chunk["tokens"] == row["input_ids"][:-1]
        inputs = datum["loss_fn_inputs"]
        assert inputs["target_tokens"] == {
            "data": row["input_ids"][1:],
            "dtype": "int64",
            "shape": [len(row["input_ids"]) - 1],
        }
        assert inputs["weights"]["data"] == [float(value) for value in row["loss_mask"][1:]]
        assert inputs["logprobs"]["data"] == row["logprobs"][1:]
        assert {
            value
            for value, weight in zip(inputs["advantages"]["data"], inputs["weights"]["data"], strict=True)
            if weight
        } == {row["advantage"]}


def test_sft_export_keeps_passing_trajectories_in_openai_format(
    arith_run: Path, guess_run: Path, tmp_path: Path
) -> None:
    rows = read_lines(export(arith_run, "sft", tmp_path / "s.jsonl"))
    assert len(rows) == 3
    for row in rows:
        assert [message["role"] for message in row["messages"]] == ["user", "assistant"]
        assert "tools" not in row and "<think>" not in row["messages"][1]["content"]
    tool_rows = read_lines(export(guess_run, "sft", tmp_path / "g.jsonl"))
    assert len(tool_rows) == 2
    row = tool_rows[0]
    assert row["tools"][0]["function"]["name"] == "guess"
    assert row["messages"][-1]["role"] == "assistant" and row["messages"][-2]["role"] == "tool"
    assistant = row["messages"][2]
    assert assistant["tool_calls"][0]["type"] == "function"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"])["number"] == (guess_tasks()[0].high + 1) // 2
    with pytest.raises(ConfigError, match="min_score"):
        export(arith_run, "sft", tmp_path / "none.jsonl", min_score=2.0)
    assert not (tmp_path / "none.jsonl").exists()


def test_dpo_export_pairs_better_and_worse_of_the_same_task(arith_run: Path, tmp_path: Path) -> None:
    rows = read_lines(export(arith_run, "dpo", tmp_path / "p.jsonl"))
    assert len(rows) == 3
    for row in rows:
        assert row["input"]["messages"][0]["role"] == "user"
        chosen, rejected = row["preferred_output"][0]["content"], row["non_preferred_output"][0]["content"]
        assert int(rejected) == int(chosen) + 1
    trl = read_lines(export(arith_run, "dpo", tmp_path / "trl.jsonl", style="trl", pairs="all"))
    assert {"prompt", "chosen", "rejected", "task_id"} <= set(trl[0])
    with pytest.raises(ConfigError, match="pairs"):
        export(arith_run, "dpo", tmp_path / "x.jsonl", pairs="some")


def test_hf_export_reloads_as_a_dataset(arith_run: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    folder = export(arith_run, "hf", tmp_path / "dataset")
    dataset = datasets.load_from_disk(str(folder))
    assert len(dataset) == 6 and sum(dataset["passed"]) == 3
    first = dataset[0]
    assert len(first["input_ids"]) == len(first["loss_mask"]) == len(first["logprobs"])
    assert json.loads(first["messages"])[0]["role"] == "user"
    parquet = export(arith_run, "hf", tmp_path / "rows.parquet", only_passed=True)
    reloaded = datasets.Dataset.from_parquet(str(parquet))
    assert len(reloaded) == 3 and all(reloaded["passed"])


def test_token_exports_refuse_runs_without_tokens(tmp_path: Path) -> None:
    out = tmp_path / "oracle.jsonl"
    run("toy/arith-v0", policy="oracle", limit=2, out=out)
    with pytest.raises(ConfigError, match="token-level policy"):
        export(out, "tokens", tmp_path / "t.jsonl")
    assert len(read_lines(export(out, "sft", tmp_path / "s.jsonl"))) == 2  # chat exports work for any policy
    with pytest.raises(ConfigError, match="does not know option"):
        export(out, "sft", tmp_path / "s2.jsonl", min_scor=1)


def test_cli_exports_each_format(arith_run: Path, tmp_path: Path) -> None:
    from rolloutgym.cli import app
    from typer.testing import CliRunner

    runner = CliRunner()
    for format_name in ("tokens", "sft", "dpo", "hf", "tinker"):
        target = tmp_path / f"out.{format_name}"
        result = runner.invoke(app, ["export", str(arith_run), "--format", format_name, "--out", str(target)])
        assert result.exit_code == 0, result.output
        assert target.exists()


def test_cli_default_export_paths_sit_next_to_the_run_file(arith_run: Path, tmp_path: Path) -> None:
    import shutil

    from rolloutgym.cli import app
    from typer.testing import CliRunner

    run_file = tmp_path / "arith.jsonl"
    shutil.copy(arith_run, run_file)
    runner = CliRunner()
    for format_name, expected in (("jsonl", "arith.trajectories.jsonl"), ("sft", "arith.sft.jsonl")):
        args = ["export", str(run_file)] + ([] if format_name == "jsonl" else ["--format", format_name])
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert (tmp_path / expected).is_file(), sorted(path.name for path in tmp_path.iterdir())
    assert not (tmp_path / "arith.jsonl.jsonl").exists()
