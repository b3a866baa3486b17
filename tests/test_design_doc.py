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
TRL_SRC = ROOT / "plugins" / "trl" / "src"
DOC = (ROOT / "docs" / "explanation" / "design.md").read_text()
DIAGRAM = DOC.split("## The path of one run", 1)[1].split("```", 2)[1]

_PATH = re.compile(r"(?<![\w/.:])((?:[a-z_]+/)*[a-z_]+\.py|[a-z_]+/)(?=[\s)]|$)")
_CALL = re.compile(r"\b([a-z_]+)\.([A-Za-z_]\w*)\(")


def _module_file(path: str) -> Path:
    """A path the doc names: under the trl plugin's sources for ``rolloutgym_trl/...``, else under the core."""
    return TRL_SRC / path if path.startswith("rolloutgym_trl/") else CORE / path


def _paths() -> list[str]:
    found = set(_PATH.findall(DIAGRAM)) | set(re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.py)`", DOC))
    return sorted(found)


def test_the_diagram_is_there():
    assert "env.step(action)" in DIAGRAM and len(_paths()) >= 8


@pytest.mark.parametrize("path", _paths())
def test_every_module_of_the_diagram_exists(path: str):
    assert _module_file(path).exists(), f"design.md names {path}, which is not under {CORE.relative_to(ROOT)}"


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


# The two other paths (a remote step, a `train grpo` episode): their modules and the names they cite,
# checked in the source with ``ast`` (no import: the trl plugin's modules need torch and TRL).
OTHER_PATHS = "".join(
    DOC.split(title, 1)[1].split("```", 2)[1]
    for title in ("## The path of a remote step", "## The path of a `train grpo` episode")
)
# Named in those diagrams but defined outside this repository (TRL, Starlette) or a parameter.
_EXTERNAL = {"GRPOTrainer", "WebSocketRoute", "factory"}


def _definitions() -> tuple[set[str], dict[str, set[str]]]:
    """Every function, class and class attribute name of the core and the trl plugin; each class's members."""
    import ast

    names: set[str] = set()
    members: dict[str, set[str]] = {}
    for path in [*CORE.rglob("*.py"), *TRL_SRC.rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.ClassDef):
                names.add(node.name)
                inside = members.setdefault(node.name, set())
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        inside.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        inside.add(item.target.id)
                names |= inside
    return names, members


NAMES, MEMBERS = _definitions()


def test_the_other_diagrams_are_there():
    assert "SessionManager.step" in OTHER_PATHS and "RolloutFunction.__call__" in OTHER_PATHS


@pytest.mark.parametrize("path", sorted(set(re.findall(r"(?<![\w/.])((?:[a-z_]+/)+[a-z_]+\.py)\b", OTHER_PATHS))))
def test_every_module_of_the_other_diagrams_exists(path: str):
    assert _module_file(path).exists(), f"design.md names {path}, which does not exist"


@pytest.mark.parametrize("dotted", sorted(set(re.findall(r"\b[A-Z]\w*\._*[a-z]\w*", OTHER_PATHS))))
def test_every_method_of_the_other_diagrams_exists(dotted: str):
    owner, member = dotted.split(".")
    assert member in MEMBERS.get(owner, set()), f"design.md names {owner}.{member}, which is not defined"


@pytest.mark.parametrize(
    "name",
    sorted(
        (
            {name for name in re.findall(r"\b(?:[a-z_]\w*\.)+([A-Za-z_]\w*)", OTHER_PATHS) if name != "py"}
            | set(re.findall(r"\b([A-Za-z_]\w*)\(", OTHER_PATHS))
            | {"env_info", "env_tasks", "acquire_channel", "many_sessions", "_make_env", "_together"}
            | {"_one_at_a_time", "_run_sample", "episode_tensors", "env_reward", "train_dataset", "create_app"}
        )
        - _EXTERNAL
    ),
)
def test_every_name_of_the_other_diagrams_is_defined(name: str):
    assert name in OTHER_PATHS, name
    assert name in NAMES, f"design.md names {name}, which no module of the core or of rolloutgym-trl defines"
