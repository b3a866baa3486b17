"""Bad output paths get one line that says why, never a traceback; a failed export leaves no file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ENV = dict(os.environ, COLUMNS="200")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rolloutgym", *args], capture_output=True, text=True, env=ENV, timeout=180
    )


@pytest.fixture(scope="module")
def run_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("paths") / "run.jsonl"
    result = cli("run", "sql/shop-v0", "--policy", "oracle", "--limit", "2", "-q", "-o", str(path))
    assert result.returncode == 0, result.stderr
    return path


def _one_line_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    for word in words:
        assert word in lines[0]


def test_run_out_paths(tmp_path: Path) -> None:
    _one_line_error(cli("run", "toy/arith-v0", "--limit", "1", "-q", "--out", "/proc/x/run.jsonl"), "/proc/x")
    _one_line_error(cli("run", "toy/arith-v0", "--limit", "1", "-q", "--out", str(tmp_path)), "is a folder")
    _one_line_error(cli("run", "toy/arith-v0", "--limit", "1", "-q", "--out", str(tmp_path), "--resume"), "is a folder")


def test_report_export_rescore_out_paths(run_file: Path, tmp_path: Path) -> None:
    _one_line_error(cli("export", str(run_file), "--format", "sft", "-o", "/proc/x/out.jsonl"), "/proc/x")
    _one_line_error(cli("export", str(run_file), "--format", "sft", "-o", str(tmp_path)), "is a folder")
    _one_line_error(cli("rescore", str(run_file), "-o", str(tmp_path)), "is a folder")
    report = cli("report", str(run_file), "-o", "/proc/x/report.html")
    if "matplotlib" not in report.stderr:
        _one_line_error(report, "/proc/x")


def test_a_failed_export_leaves_no_file_and_the_readme_export_works(run_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "tokens.jsonl"
    failed = cli("export", str(run_file), "--format", "tokens", "-o", str(target))
    assert failed.returncode == 2 and "token-level policy" in failed.stderr
    assert not target.exists()
    sft = cli("export", str(run_file), "--format", "sft", "-o", str(tmp_path / "sft.jsonl"))
    assert sft.returncode == 0, sft.stderr
    assert (tmp_path / "sft.jsonl").read_text().strip()
