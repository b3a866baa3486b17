"""docs/explanation/design.md draws the path of one run; every room and call it names must exist.

The diagram is what a newcomer reads first: a renamed module or function must fail here,
not mislead them.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "packages" / "rolloutgym" / "src" / "rolloutgym"
DOC = (ROOT / "docs" / "explanation" / "design.md").read_text()
DIAGRAM = DOC.split("## The path of one run", 1)[1].split("```", 2)[1]

_PATH = re.compile(r"(?<![\w/.:])((?:[a-z_]+/)*[a-z_]+\.py|[a-z_]+/)(?=[\s)]|$)")
_CALL = re.compile(r"\b([a-z_]+)\.([A-Za-z_]\w*)\(")


def _paths() -> list[str]:
    found = set(_PATH.findall(DIAGRAM)) | set(re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.py)`", DOC))
    return sorted(found)


def test_the_diagram_is_there():
    assert "env.step(action)" in DIAGRAM and len(_paths()) >= 8


@pytest.mark.parametrize("path", _paths())
def test_every_module_of_the_diagram_exists(path: str):
    assert (CORE / path).exists(), f"design.md names {path}, which is not under {CORE.relative_to(ROOT)}"


@pytest.mark.parametrize(
    ("module", "name"),
    sorted({pair for pair in _CALL.findall(DIAGRAM) if (CORE / pair[0]).is_dir() or (CORE / f"{pair[0]}.py").exists()}),
)
def test_every_call_of_the_diagram_exists(module: str, name: str):
    assert hasattr(importlib.import_module(f"rolloutgym.{module}"), name), f"rolloutgym.{module}.{name} is gone"


@pytest.mark.parametrize(
    "name",
    sorted(set(re.findall(r"\b([A-Z][A-Za-z]+)\(", DIAGRAM)) | {"RunSummary", "GroupCollector", "EpisodeState"}),
)
def test_every_class_of_the_diagram_exists(name: str):
    modules = ("sources", "runner", "rollouts", "runs", "executors", "registry")
    assert any(hasattr(importlib.import_module(f"rolloutgym.{module}"), name) for module in modules), name


@pytest.mark.parametrize("pair", sorted(set(re.findall(r"\b([A-Z][A-Za-z]+)\.([a-z_]\w*)", DIAGRAM))))
def test_every_method_of_the_diagram_exists(pair: tuple[str, str]):
    owner, method = pair
    modules = ("sources", "runner", "rollouts", "runs", "executors", "registry")
    classes = [getattr(importlib.import_module(f"rolloutgym.{m}"), owner, None) for m in modules]
    assert any(hasattr(cls, method) for cls in classes if cls is not None), f"{owner}.{method}"


@pytest.mark.parametrize(
    "dotted",
    sorted({f"{a}.{b}" for a, b in re.findall(r"\b(declarative|rollouts|runs|registry)\.([a-z_]\w*)", DIAGRAM)}),
)
def test_every_dotted_function_exists(dotted: str):
    module, name = dotted.split(".")
    target = importlib.import_module(f"rolloutgym.{module}")
    assert hasattr(target, name) or hasattr(target.Registry if module == "registry" else target, name), dotted


@pytest.mark.parametrize(
    "name", ["select_tasks", "summarize", "arun_loop", "arun_episode", "release_env", "error_record"]
)
def test_the_functions_named_in_the_diagram_exist(name: str):
    assert name in DIAGRAM
    modules = ("runner", "runs", "rollouts", "rollouts._episode")
    assert any(hasattr(importlib.import_module(f"rolloutgym.{m}"), name) for m in modules), name
