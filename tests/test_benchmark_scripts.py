"""Rules for the scripts in benchmarks/."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_no_benchmark_script_hides_a_standard_library_module() -> None:
    """``python benchmarks/X.py`` puts benchmarks/ first on sys.path: a ``platform.py`` there would be
    imported by every library that asks for Python's ``platform`` module, and break every script."""
    scripts = sorted(path.stem for path in BENCHMARKS.rglob("*.py"))
    assert scripts, "benchmarks/ holds no scripts"
    assert [name for name in scripts if name in sys.stdlib_module_names] == []
