"""Every path that rebuilds a run's env uses the source recorded in the run header (``rolloutgym.sources.
recorded_reference``), not the header's id: SFT/DPO rows, ``rolloutgym train sft|dpo|grpo``, ``rolloutgym rescore``,
for runs of a registered id, of an env file (run from another folder too), and of a served env (a real
``rolloutgym serve`` on 127.0.0.1). Pushed slugs are covered on the platform (``test_seed_readme_loop.py``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import rolloutgym as rg
from rolloutgym.cli import main
from rolloutgym.rescore import rescore_run
from rolloutgym.runs import read_run
from rolloutgym.serve import ServerProcess
from rolloutgym.sources import recorded_reference, resolve_recorded
from rolloutgym_protocol.errors import ConfigError, EnvNotFound
from rolloutgym_trl._models import load_trainable
from rolloutgym_trl.offline_rows import dpo_rows, sft_rows

REFUND_AGENT = """
from rolloutgym import Environment, Task

env = Environment(
    slug="refund-agent",
    name="Refund Agent",
    template="workflow",
    config={
        "tools": [
            {"name": "lookup_order", "kind": "lookup", "fixturePath": "orders.${args.order_id}"},
            {"name": "refund", "kind": "action", "appendTo": "refunds",
             "value": {"order_id": "${args.order_id}", "amount": "${args.amount}"}},
        ],
        "fixtures": {"orders": {"O-1": {"customer": "Alice", "amount": 100, "status": "shipped"}}},
        "initialMutableState": {"refunds": []},
    },
    tasks=[
        Task(instruction="Refund order O-1 for $100 for Alice",
             hidden_ground_truth={"refunds": [{"order_id": "O-1", "amount": 100.0}]}),
        Task(instruction="Alice asks about O-1; refund nothing", hidden_ground_truth={"refunds": []}),
    ],
)
"""


@pytest.fixture(scope="module")
def tokenizer():
    return load_trainable("hf:tiny").tokenizer


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    path = tmp_path / "refund_agent.py"
    path.write_text(REFUND_AGENT)
    return path


def _mixed_run(reference: str, out: Path) -> Path:
    """A run where some episodes pass and some do not (oracle and null, one file each, concatenated groups)."""
    rg.run(reference, policy="oracle", num_rollouts=2, out=out, seed=0)
    return out


def test_the_recorded_reference_of_each_kind_of_source(tmp_path: Path, env_file: Path) -> None:
    assert recorded_reference({"id": "toy/guess-v0", "source": "registry"}) == "toy/guess-v0"
    assert recorded_reference({"id": "toy/guess-v0"}) == "toy/guess-v0"  # headers before the field
    assert recorded_reference({"id": "x/y-v0", "source": "http://127.0.0.1:9/x/y-v0"}) == "http://127.0.0.1:9/x/y-v0"
    assert recorded_reference({"id": "file/refund-agent-v0", "source": f"file:{env_file}"}) == str(env_file)
    # a relative path recorded elsewhere is found beside the run file
    run_path = tmp_path / "runs" / "run.jsonl"
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "agent.py").write_text(REFUND_AGENT)
    found = recorded_reference({"id": "file/refund-agent-v0", "source": "file:agent.py"}, run_path=run_path)
    assert Path(found) == tmp_path / "runs" / "agent.py"
    with pytest.raises(ConfigError, match=r"env file 'gone.py' .*not at 'gone.py'"):
        recorded_reference({"id": "file/gone-v0", "source": "file:gone.py"}, run_path=run_path)


def test_a_file_env_resolved_from_a_run_is_known_by_its_id(tmp_path: Path, env_file: Path) -> None:
    run = read_run(_mixed_run(str(env_file), tmp_path / "run.jsonl"))
    assert run.header["env"]["id"] == "file/refund-agent-v0"
    registry = rg.Registry()
    with pytest.raises(EnvNotFound):
        registry.resolve_env("file/refund-agent-v0")  # the bug: the id alone names nothing
    resolved = resolve_recorded(run.header["env"], run_path=run.path, registry=registry)
    assert resolved.env_id == "file/refund-agent-v0" and len(resolved.tasks) == 2
    environment = registry.make("file/refund-agent-v0", task=1)  # now known by its id, task by index
    assert "refund nothing" in str(environment.reset(seed=0)[0])
    assert rg.run("file/refund-agent-v0", policy="oracle", out=None, registry=registry).summary.pass_rate == 1.0


@pytest.mark.parametrize("where", ["same folder", "another folder"])
def test_sft_and_dpo_rows_of_an_env_file_run(tmp_path: Path, env_file: Path, tokenizer, monkeypatch, where) -> None:
    monkeypatch.chdir(tmp_path)
    run_path = _mixed_run("refund_agent.py", tmp_path / "run.jsonl")  # recorded as the relative path
    assert read_run(run_path).header["env"]["source"] == "file:refund_agent.py"
    if where == "another folder":
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.chdir(tmp_path / "elsewhere")
    rows = sft_rows([read_run(run_path)], tokenizer)
    assert len(rows) == 4 and all(row["input_ids"] for row in rows)
    sampled = tmp_path / "sampled.jsonl"
    rg.run(str(env_file), policy="random", num_rollouts=4, out=sampled, seed=3)
    try:
        pairs = dpo_rows([read_run(sampled)], tokenizer)
    except ConfigError as exc:  # random rarely differs within a group; the env was rebuilt either way
        assert "no reward variance" in str(exc)
    else:
        assert all(pair["chosen"] != pair["rejected"] for pair in pairs)


def test_sft_rows_of_registered_and_served_runs(tmp_path: Path, tokenizer) -> None:
    local = _mixed_run("toy/guess-v0", tmp_path / "local.jsonl")
    with ServerProcess(["toy/guess-v0"]) as server:
        url = server.url("toy/guess-v0")
        served = tmp_path / "served.jsonl"
        rg.run(url, policy="oracle", num_rollouts=2, out=served, seed=0, limit=3)
        assert read_run(served).header["env"]["source"] == url.rstrip("/")
        remote_rows = sft_rows([read_run(served)], tokenizer)
    local_rows = sft_rows([read_run(local)], tokenizer)
    assert len(remote_rows) == 6 and remote_rows[0]["input_ids"] == local_rows[0]["input_ids"]


def test_rescore_of_an_env_file_run_from_another_folder(tmp_path: Path, env_file: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    run_path = _mixed_run("refund_agent.py", tmp_path / "run.jsonl")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    result = rescore_run(run_path, force=True)  # env files do not declare replayable grading
    assert result.trajectories == 4 and result.changed == 0 and result.mismatched_replays == 0


def _cli(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("method", ["sft", "grpo"])
def test_train_on_a_run_of_an_env_file(tmp_path: Path, env_file: Path, capsys, monkeypatch, method) -> None:
    """``rolloutgym train sft RUN`` (the run's env file rebuilt for its tools and the evaluation) and ``train grpo
    FILE``, one step each on hf:tiny."""
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    source = str(_mixed_run("refund_agent.py", tmp_path / "run.jsonl")) if method == "sft" else "refund_agent.py"
    args = ["train", method, source, "--model", "hf:tiny", "--steps", "1", "--out", str(tmp_path / method)]
    args += ["--eval-rollouts", "1"] if method == "sft" else ["-g", "2", "--prompts-per-step", "1", "--split", "all"]
    code, out = _cli(capsys, *args, *(["--no-eval"] if method == "grpo" else []))
    assert code == 0, out
    assert "EnvNotFound" not in out and "no environment" not in out
    log = [json.loads(line) for line in (tmp_path / method / "training_log.jsonl").read_text().splitlines()]
    assert log[0].get("env_ids", ["file/refund-agent-v0"]) == ["file/refund-agent-v0"]
    if method == "sft":
        assert "file/refund-agent-v0" in out  # the before/after evaluation ran on the file's env


def test_grpo_refuses_a_served_env_with_the_way_out(capsys) -> None:
    code, out = _cli(capsys, "train", "grpo", "http://127.0.0.1:9/toy/guess-v0", "--steps", "1")
    assert code != 0 and "not a served env" in out and "SFT/DPO" in out
