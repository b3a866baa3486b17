"""A run whose every member errored (a model server that is down, a policy that crashes) has no pass rate: ``show``,
``runs``, ``compare`` and the HTML report say "no scored episode" instead of "pass rate 0.0%". A run with some scored
members still shows its pass rate."""

from __future__ import annotations

import pytest
import rolloutgym as rg
from rolloutgym.cli import main
from rolloutgym.report import build_report


def crashing(observation, info=None):
    raise ConnectionError("the model server is down")


def _runs(tmp_path, policy, name, **options):
    out = tmp_path / name
    rg.run("toy/arith-v0", policy=policy, limit=3, num_rollouts=2, out=out, **options)
    return out


@pytest.fixture
def runs(tmp_path):
    return _runs(tmp_path, crashing, "down.jsonl"), _runs(tmp_path, "oracle", "oracle.jsonl")


def _out(capsys, *args) -> tuple[int, str]:
    code = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


def test_show_says_no_scored_episode(runs, capsys) -> None:
    down, oracle = runs
    _, out = _out(capsys, "show", down)
    assert "no scored episode: all 6 episode(s) ended in errors" in out and "pass rate 0.0%" not in out
    _, out = _out(capsys, "show", oracle)
    assert "pass rate 100.0%" in out


def test_runs_lists_none_scored(runs, capsys) -> None:
    down, _ = runs
    _, out = _out(capsys, "runs", down.parent)
    assert "none scored" in out and " 0.0%" not in out and "100.0%" in out


@pytest.mark.parametrize("order", ["down first", "down second"])
def test_compare_refuses_to_compare_a_run_without_scores(runs, capsys, order) -> None:
    down, oracle = runs
    first, second = (down, oracle) if order == "down first" else (oracle, down)
    _, out = _out(capsys, "compare", first, second)
    assert "no scored episode in run" in out and str(down) in out
    assert "overall pass rate" not in out


def test_the_report_card_says_none_scored(runs, tmp_path) -> None:
    down, oracle = runs
    page = build_report([down], out=tmp_path / "down.html").path.read_text()
    assert "none scored" in page and "no episode was scored: 6 errors" in page
    assert "none scored" not in build_report([oracle], out=tmp_path / "oracle.html").path.read_text()
