"""``show`` and ``compare`` fold tasks with identical numbers: three rows, then "… N more tasks with these
numbers", so the summary lines are not pushed off screen by 40 identical rows; differing rows stay."""

from __future__ import annotations

import pytest
import rolloutgym as rg
from rolloutgym.cli import main
from rolloutgym.cli.runs import collapse_identical


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        (["0"] * 10, ["t0", "t1", "t2", "… 7 more alike"]),
        (["0"] * 4, ["t0", "t1", "t2", "t3"]),  # one more than kept: shown, not folded
        (["0"] * 3, ["t0", "t1", "t2"]),
        (["0", "1", "0", "1", "0", "1", "0", "1", "0"],
         ["t0", "t1", "t2", "t3", "t4", "t5", "… 2 more alike", "t7"]),
        ([str(n) for n in range(6)], [f"t{n}" for n in range(6)]),
    ],
)  # fmt: skip
def test_collapse_identical(numbers, expected) -> None:
    rows = [[f"t{index}", value, "x"] for index, value in enumerate(numbers)]
    assert [row[0] for row in collapse_identical(rows)] == expected


def _out(capsys, *args) -> str:
    assert main([str(arg) for arg in args]) == 0
    return capsys.readouterr().out


def test_show_and_compare_of_forty_identical_tasks(tmp_path, capsys) -> None:
    null = tmp_path / "null.jsonl"
    oracle = tmp_path / "oracle.jsonl"
    rg.run("toy/arith-v0", policy="null", limit=40, out=null)
    rg.run("toy/arith-v0", policy="oracle", limit=40, out=oracle)
    shown = _out(capsys, "show", null)
    assert "… 37 more alike" in shown
    assert sum(1 for line in shown.splitlines() if "│" in line and "0%" in line) == 4
    compared = _out(capsys, "compare", null, oracle)
    assert "… 37 more alike" in compared and "overall pass rate 0.0% → 100.0%" in compared
    assert len(compared.splitlines()) < 20
