"""The tree passes ``ruff check`` and ``ruff format --check`` with the workspace's settings.

The settings live in the top-level ``pyproject.toml`` (rules, and one width of 120 columns
for the formatter and for E501, strings and comments included). ruff comes with the test
environment (``hatch.toml``); this test runs the same ruff that ``hatch run lint`` does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["protocol", "packages", "plugins", "tests", "benchmarks", "scripts"]


def _ruff() -> list[str]:
    """ruff next to this interpreter, else on PATH, else ``python -m ruff``."""
    beside = Path(sys.executable).with_name("ruff")
    if beside.is_file():
        return [str(beside)]
    on_path = shutil.which("ruff")
    if on_path is not None:
        return [on_path]
    found = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True, text=True)
    if found.returncode == 0:
        return [sys.executable, "-m", "ruff"]
    pytest.fail("ruff is not installed; it is a dependency of the hatch test env: pip install 'ruff==0.17.6'")


@pytest.mark.parametrize(
    "arguments",
    [["check", "--no-cache", "--output-format", "concise"], ["format", "--no-cache", "--check"]],
    ids=["check", "format"],
)
def test_ruff_finds_nothing(arguments: list[str]) -> None:
    done = subprocess.run([*_ruff(), *arguments, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        f"ruff {arguments[0]} found problems (fix them, or run 'hatch run format' for formatting):\n"
        f"{done.stdout}{done.stderr}"
    )
