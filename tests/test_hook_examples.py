"""The entry points that the hookspec docstrings and the hooks reference show as examples exist.

A stale example (a module that moved, a renamed factory) misleads a plugin author; every
``"package.module:attribute"`` of a real rolloutgym package in those texts must import.
Placeholder packages (``mypkg``, ``rolloutgym_mygame``, ``module``) are skipped.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from rolloutgym.registry import import_entry_point
from rolloutgym_protocol import hookspecs

ROOT = Path(__file__).resolve().parents[1]
TEXTS = {
    "hookspecs.py": Path(hookspecs.__file__).read_text(),
    "docs/reference/hooks.md": (ROOT / "docs" / "reference" / "hooks.md").read_text(),
}
PLACEHOLDERS = ("mypkg", "rolloutgym_mygame", "module", "package")
_REFERENCE = re.compile(r"[\"']([A-Za-z_][\w.]*:[A-Za-z_][\w.]*)[\"']")
_PLUGIN_MODULE = re.compile(r"=\s*\"(rolloutgym[\w]*\.[\w.]+)\"")


def _references() -> list[tuple[str, str]]:
    found = []
    for where, text in TEXTS.items():
        for reference in sorted(set(_REFERENCE.findall(text))):
            if reference.split(".")[0].split(":")[0] not in PLACEHOLDERS:
                found.append((where, reference))
    return found


def test_the_texts_show_real_examples():
    assert len(_references()) >= 8


@pytest.mark.parametrize(("where", "reference"), _references())
def test_example_entry_point_imports(where: str, reference: str):
    assert import_entry_point(reference, what=f"example in {where}") is not None


@pytest.mark.parametrize("module", sorted({m for text in TEXTS.values() for m in _PLUGIN_MODULE.findall(text)}))
def test_example_plugin_module_imports(module: str):
    importlib.import_module(module)
