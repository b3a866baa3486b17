"""User text prints as written: brackets in paths, ids and install hints are not rich markup."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENV = dict(os.environ, COLUMNS="200")


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rolloutgym", *args], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=180
    )


def test_a_run_file_whose_path_holds_markup_runs_and_prints_its_path(tmp_path: Path) -> None:
    folder = tmp_path / "runs[/]" / "[bold]x"
    folder.mkdir(parents=True)
    out = folder / "demo[1].jsonl"
    result = cli("run", "toy/arith-v0", "--policy", "oracle", "--limit", "2", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "demo[1].jsonl" in result.stdout and "[bold]x" in result.stdout
    shown = cli("show", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "toy/arith-v0" in shown.stdout


def test_errors_keep_their_brackets(tmp_path: Path) -> None:
    missing = cli("show", str(tmp_path / "no[/]such[red].jsonl"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "no[/]such[red].jsonl" in missing.stderr
    unknown = cli("run", "toy/gues[s]-v0", "--policy", "oracle")
    assert unknown.returncode == 2 and "toy/gues[s]-v0" in unknown.stderr


def test_install_hints_keep_their_extra() -> None:
    """An extra in an error message (pip install 'pkg[extra]') reaches the user intact."""
    code = (
        "import sys\n"
        "from rolloutgym.cli import main\n"
        "from rolloutgym_protocol.errors import ConfigError\n"
        "import rolloutgym.cli._app as app\n"
        "@app.app.command('boom')\n"
        "def boom():\n"
        "    raise ConfigError(\"needs matplotlib: pip install 'rolloutgym[report]'\")\n"
        "sys.exit(main(['boom']))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 2
    assert "pip install 'rolloutgym[report]'" in result.stderr
