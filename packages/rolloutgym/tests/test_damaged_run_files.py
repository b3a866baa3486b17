"""One rule for a run file whose last line was cut off (a killed run): every reading command warns and goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
import rolloutgym as rg
from rolloutgym.cli import main


@pytest.mark.parametrize("command", ["show", "rescore", "export"])
def test_a_torn_run_file_is_read_with_a_warning(tmp_path: Path, command: str, capsys: pytest.CaptureFixture) -> None:
    run_file = tmp_path / "run.jsonl"
    rg.run("toy/arith-v0", policy="oracle", num_rollouts=2, limit=3, out=run_file)
    data = run_file.read_bytes()
    run_file.write_bytes(data[: len(data) - 40])  # the last group line cut mid-write
    capsys.readouterr()
    assert main([command, str(run_file)]) == 0
    captured = capsys.readouterr()
    assert "cut off mid-write" in captured.err and "--resume" in captured.err
    assert "Traceback" not in captured.err
