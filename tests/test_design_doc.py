"""docs/explanation/design.md draws the path of one run; every room and call it names must exist.

The diagram is what a newcomer reads first: a renamed module or function must fail here,
not mislead them.
"""

from __future__ import annotations

import importlib
import importlib.util
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


# The buildings (design.md, "Buildings"): which of our top-level packages each one's source may import.
BUILDINGS = {
    "protocol": [ROOT / "protocol" / "src"],
    "core": [ROOT / "packages" / "rolloutgym" / "src"],
    "platform": [ROOT / "packages" / "rolloutgym-platform" / "src"],
    "plugins": sorted((ROOT / "plugins").glob("*/src")),
}


def _imports(building: str) -> list[tuple[str, str, str]]:
    """``(file, module, name)`` for every import of one of our packages in the building's source (``name`` is
    ``""`` for ``import module``); relative imports stay inside their package and are left out."""
    import ast

    found = []
    for source in BUILDINGS[building]:
        for path in sorted(source.rglob("*.py")):
            where = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), where)):
                if isinstance(node, ast.Import):
                    found += [(where, alias.name, "") for alias in node.names if alias.name.startswith("rolloutgym")]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module.startswith("rolloutgym"):
                    found += [(where, node.module, alias.name) for alias in node.names]
    return found


def _top(module: str) -> str:
    return module.split(".")[0]


def test_the_buildings_are_drawn():
    section = DOC.split("## Buildings", 1)[1].split("\n## ", 1)[0]
    for line in ("protocol  | rolloutgym-protocol", "core      | rolloutgym ", "platform  | rolloutgym-platform"):
        assert line in section, f"design.md's buildings table lacks {line!r}"
    assert "packages/rolloutgym-platform/" in section and "public names" in section


def test_the_protocol_imports_no_other_building():
    assert [item for item in _imports("protocol") if _top(item[1]) != "rolloutgym_protocol"] == []


def test_the_core_never_imports_the_platform_or_a_plugin():
    assert [item for item in _imports("core") if _top(item[1]) not in ("rolloutgym", "rolloutgym_protocol")] == []


def test_no_plugin_imports_the_platform():
    assert [item for item in _imports("plugins") if _top(item[1]) == "rolloutgym_platform"] == []


def _is_public(module: str, name: str) -> bool:
    """``module`` has no private part and ``name`` (if any) is in its ``__all__`` or is a public submodule."""
    if any(part.startswith("_") for part in module.split(".")):
        return False
    if not name:
        return True
    target = importlib.import_module(module)
    if name in getattr(target, "__all__", ()):
        return True
    if name.startswith("_") or not hasattr(target, "__path__"):
        return False
    return importlib.util.find_spec(f"{module}.{name}") is not None


def test_the_platform_imports_only_public_names_of_the_core():
    pytest.importorskip("rolloutgym_platform", reason="rolloutgym-platform is not installed")
    imports = _imports("platform")
    core = [(where, module, name) for where, module, name in imports if _top(module) == "rolloutgym"]
    assert core, "the platform's imports of the core were not found"
    private = [f"{where}: from {module} import {name}" for where, module, name in core if not _is_public(module, name)]
    assert private == [], "the platform may import only public names of the core (in a module's __all__)"
    others = {_top(module) for _, module, _ in imports} - {"rolloutgym", "rolloutgym_protocol", "rolloutgym_platform"}
    assert others == set(), f"the platform imports a plugin: {sorted(others)}"


def test_the_public_name_rule_catches_a_private_import():
    assert _is_public("rolloutgym.runs", "iter_run") and _is_public("rolloutgym", "get_registry")
    assert not _is_public("rolloutgym.runs._partial", "anything")
    assert not _is_public("rolloutgym.runs", "_no_such_private_name")
    assert not _is_public("rolloutgym.install_hints", "CPU_TORCH")  # a module-level name not in __all__
