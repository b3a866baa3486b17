"""``rolloutgym run --branch-at ... -n ...`` writes rollout trees; ``show --tree`` draws them; old readers read them."""

from __future__ import annotations

from pathlib import Path

from rolloutgym.cli import app
from rolloutgym.runs import read_run
from typer.testing import CliRunner


def test_run_branch_at_writes_trees_that_show_draws(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "tree.jsonl"
    result = runner.invoke(
        app, ["run", "toy/guess-v0", "--branch-at", "1,2", "-n", "3", "--limit", "2", "--seed", "0", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    run = read_run(out)
    assert run.header["options"]["branch_at"] == "1,2" and run.header["options"]["executor"] == "tree"
    for group in run.groups:
        trunk, *branches = group.trajectories
        assert [b.metadata["branch"]["at"] for b in branches] == [1, 1, 1, 2, 2, 2]
        assert all(b.steps[: b.metadata["branch"]["at"]] == trunk.steps[: b.metadata["branch"]["at"]] for b in branches)
    shown = runner.invoke(app, ["show", str(out), "--tree"])
    assert shown.exit_code == 0, shown.output
    assert "step 1: 3 branches, mean reward 1.000, 3 passed" in shown.output
    assert "1.2: calls guess -> " in shown.output


def test_branch_at_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "x.jsonl"
    bad = runner.invoke(app, ["run", "toy/guess-v0", "--branch-at", "often", "--out", str(out)])
    assert bad.exit_code != 0 and "--branch-at: branch_at 'often': give 'every'" in str(bad.exception)
    ray = runner.invoke(app, ["run", "toy/guess-v0", "--branch-at", "every", "--executor", "ray", "--out", str(out)])
    assert ray.exit_code != 0 and "not with --mix or --executor ray" in str(ray.exception)
    assert not out.exists()
