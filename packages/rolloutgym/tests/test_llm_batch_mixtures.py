"""Env mixtures (``--mix``): parsing, task allocation by weight, and the interleaved run order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rolloutgym.errors import ConfigError
from rolloutgym.mixtures import MixtureEntry, allocate, interleave, mixture_label, parse_mixture

AVAILABLE = {"sql/shop-v0": 55, "workflow/refund-v0": 49, "bench/gsm8k-v0": 30}


def test_mixtures_parse_from_text_mappings_and_files(tmp_path: Path) -> None:
    expected = [
        MixtureEntry("sql/shop-v0", 2.0),
        MixtureEntry("workflow/refund-v0", 1.0),
        MixtureEntry("bench/gsm8k-v0", 1.0),
    ]
    assert parse_mixture("sql/shop-v0=2, workflow/refund-v0=1,bench/gsm8k-v0") == expected
    assert parse_mixture({"sql/shop-v0": 2, "workflow/refund-v0": 1, "bench/gsm8k-v0": 1.0}) == expected
    as_json = tmp_path / "mix.json"
    as_json.write_text(
        json.dumps([{"env": "sql/shop-v0", "weight": 2}, {"env": "workflow/refund-v0"}, {"env": "bench/gsm8k-v0"}])
    )
    as_text = tmp_path / "mix.txt"
    as_text.write_text("# training mix\nsql/shop-v0=2\nworkflow/refund-v0 = 1  # tools\n\nbench/gsm8k-v0\n")
    assert parse_mixture(str(as_json)) == parse_mixture(as_text) == expected
    assert mixture_label(expected) == "sql/shop-v0=2,workflow/refund-v0=1,bench/gsm8k-v0=1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the mixture is empty"),
        ("sql/shop-v0=0", "must be a positive number"),
        ("sql/shop-v0=two", "must be a number"),
        ("sql/shop-v0=1,sql/shop-v0=2", "appears twice"),
        ("=3", "has no env id"),
    ],
)
def test_bad_mixtures_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_mixture(text)


def test_allocation_follows_the_weights() -> None:
    entries = parse_mixture("sql/shop-v0=2,workflow/refund-v0=1,bench/gsm8k-v0=1")
    # no limit: the most tasks at 2:1:1 that every env can supply (sql's 55 bound it)
    assert allocate(entries, AVAILABLE) == {"sql/shop-v0": 55, "workflow/refund-v0": 27, "bench/gsm8k-v0": 27}
    assert allocate(entries, AVAILABLE, 8) == {"sql/shop-v0": 4, "workflow/refund-v0": 2, "bench/gsm8k-v0": 2}
    # an env that runs out leaves its share to the others
    short = {**AVAILABLE, "sql/shop-v0": 1}
    assert allocate(entries, short, 8) == {"sql/shop-v0": 1, "workflow/refund-v0": 4, "bench/gsm8k-v0": 3}
    assert sum(allocate(entries, AVAILABLE, 500).values()) == 134


def test_the_run_order_keeps_every_prefix_mixed() -> None:
    entries = parse_mixture("a/x-v0=2,b/y-v0=1,c/z-v0=1")
    order = interleave(entries, {"a/x-v0": 4, "b/y-v0": 2, "c/z-v0": 2})
    assert [env[0] for env, _ in order] == ["a", "b", "c", "a", "a", "b", "c", "a"]
    assert [k for env, k in order if env == "a/x-v0"] == [0, 1, 2, 3]


def test_a_mixed_run_writes_one_file_that_every_command_breaks_down_per_env(tmp_path: Path) -> None:
    import rolloutgym as rg
    from rolloutgym.cli import app
    from rolloutgym.mixtures import env_breakdown, env_of_group
    from rolloutgym.report import build_report
    from rolloutgym.runs import read_run
    from typer.testing import CliRunner

    out = tmp_path / "mix.jsonl"
    result = rg.run({"toy/guess-v0": 2, "toy/arith-v0": 1}, policy="oracle", limit=6, num_rollouts=2, seed=3, out=out)
    assert result.header["env"]["id"] == "toy/guess-v0=2,toy/arith-v0=1"
    assert [entry["id"] for entry in result.header["mixture"]] == ["toy/guess-v0", "toy/arith-v0"]
    run = read_run(out)
    envs = [env_of_group(group, run.header) for group in run.groups]
    assert sorted(envs) == ["toy/arith-v0"] * 2 + ["toy/guess-v0"] * 4
    assert run.header["tasks"][:3] == ["toy/guess-v0:guess-00", "toy/arith-v0:arith-00", "toy/guess-v0:guess-01"]
    breakdown = env_breakdown(run.header, result.summary.tasks)
    assert [(row["env"], row["tasks"], row["trajectories"], row["pass_rate"]) for row in breakdown] == [
        ("toy/guess-v0", 4, 8, 1.0),
        ("toy/arith-v0", 2, 4, 1.0),
    ]

    cli = CliRunner()
    null = tmp_path / "null.jsonl"
    ran = cli.invoke(
        app,
        [
            "run",
            "--mix",
            "toy/guess-v0=2,toy/arith-v0=1",
            "-p",
            "null",
            "--limit",
            "6",
            "-n",
            "2",
            "-o",
            str(null),
            "-q",
        ],
    )
    assert ran.exit_code == 0, ran.output
    shown = cli.invoke(app, ["show", str(out)])
    assert shown.exit_code == 0 and "Per env" in shown.output and "toy/arith-v0" in shown.output
    compared = cli.invoke(app, ["compare", str(out), str(null)])
    assert compared.exit_code == 0, compared.output
    assert "toy/guess-v0" in compared.output and "-100%" in compared.output
    rescored = cli.invoke(app, ["rescore", str(out), "-o", str(tmp_path / "rescored.jsonl")])
    assert rescored.exit_code == 0 and "12 trajectories: 0 scores changed, 0 replays diverged" in rescored.output
    datasets = pytest.importorskip("datasets")
    exported = tmp_path / "mix.parquet"
    assert cli.invoke(app, ["export", str(out), "-f", "hf", "-o", str(exported)]).exit_code == 0
    rows = datasets.Dataset.from_parquet(str(exported))
    assert sorted(rows["env_id"]) == ["toy/arith-v0"] * 4 + ["toy/guess-v0"] * 8
    report = build_report([out], tmp_path / "mix.html")
    page = report.path.read_text()
    assert 'data-field="per_env"' in page and 'data-env="toy/arith-v0"' in page
    with pytest.raises(ConfigError, match="--tasks names tasks of one env"):
        rg.run({"toy/guess-v0": 1, "toy/arith-v0": 1}, tasks=["guess-00"], out=None)
