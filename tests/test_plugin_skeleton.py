"""Every folder in plugins/ follows the one plugin skeleton (docs/how-to/write-an-env-plugin.md).

Each test checks one rule of that page for every plugin and names the rule and the fix when
a plugin breaks it, so a new plugin that diverges fails here rather than in review:

* layout: ``pyproject.toml`` (distribution ``rolloutgym-NAME``, entry point group
  ``rolloutgym``), ``README.md``, ``src/rolloutgym_NAME/{__init__,plugin}.py``, ``py.typed``,
  ``tests/test_conformance.py`` subclassing the kit;
* ``plugin.py`` holds ``@hookimpl`` functions and imports only the stdlib and
  ``rolloutgym_protocol`` at module level;
* a lazy ``__init__``: ``lazy_loader.attach(__name__, submod_attrs={...})``, the same names
  imported under ``TYPE_CHECKING``; importing the package imports none of its modules and
  registering the plugin nothing beyond ``rolloutgym_protocol``; every exported name resolves;
* every import of ``src/`` is the stdlib, the plugin itself or a declared dependency, and a
  ``testing.py`` imports on a normal install (no extras);
* graders and samplers live in public modules (``grading.py``, ``sampler.py``, ...);
* no import cycles between a plugin's modules (function-level imports count too);
* shipped data files live under ``data/``; no module holds a long data literal.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = sorted(path for path in (ROOT / "plugins").iterdir() if (path / "pyproject.toml").is_file())
KIT_BASES = {"EnvConformanceTests", "PolicyConformanceTests"}
GUIDE = "docs/how-to/write-an-env-plugin.md"
# Source files whose imports are not this environment's: the file is run by another interpreter.
FOREIGN_SOURCES = {
    "plugins/code/src/rolloutgym_code/_worker.py": "run with the sandbox's own python3 (Debian's python3-pytest)",
}
LONGEST_LITERAL_LINES = 100


def _name(plugin: Path) -> str:
    return plugin.name


def _package(plugin: Path) -> Path:
    return plugin / "src" / f"rolloutgym_{plugin.name}"


@cache
def _project(plugin: Path) -> dict[str, Any]:
    return tomllib.loads((plugin / "pyproject.toml").read_text())["project"]


def _requirement_names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(text).name) for text in requirements}


def _main_dependencies(plugin: Path) -> set[str]:
    return _requirement_names(_project(plugin).get("dependencies", []))


def _extras(plugin: Path) -> dict[str, set[str]]:
    extras = _project(plugin).get("optional-dependencies", {})
    return {extra: _requirement_names(requirements) for extra, requirements in extras.items()}


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import that runs at some point (not under ``if TYPE_CHECKING:``), with whether it is in a function."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                for statement in child.orelse:  # type: ignore[attr-defined]
                    visit_one(statement, in_function)
                continue
            visit_one(child, in_function)

    def visit_one(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, in_function))
        visit(node, in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


def _sources(plugin: Path) -> list[Path]:
    """The plugin's Python modules (task fixtures under ``data/`` are not its code)."""
    package = _package(plugin)
    return sorted(path for path in package.rglob("*.py") if "data" not in path.relative_to(package).parts)


def _module_name(plugin: Path, path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(plugin / "src").with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_layout(plugin: Path) -> None:
    """Rule 'layout': the files every plugin has, named the same way."""
    project = _project(plugin)
    name = plugin.name
    assert project["name"] == f"rolloutgym-{name}", f"{name}: the distribution must be named rolloutgym-{name}"
    entry_points = project.get("entry-points", {}).get("rolloutgym", {})
    assert entry_points == {name: f"rolloutgym_{name}.plugin"}, (
        f"{name}: pyproject.toml needs [project.entry-points.rolloutgym] {name} = 'rolloutgym_{name}.plugin' "
        f"(and nothing else in that group); see {GUIDE}"
    )
    required = ["README.md", "tests/test_conformance.py"] + [
        f"src/rolloutgym_{name}/{file}" for file in ("__init__.py", "plugin.py", "py.typed")
    ]
    missing = [file for file in required if not (plugin / file).is_file()]
    assert not missing, f"{name}: missing {missing}; every plugin has them (see {GUIDE})"
    renamed = sorted(path.name for path in (plugin / "tests").glob("test_*_conformance.py"))
    assert not renamed, f"{name}: the conformance tests live in tests/test_conformance.py, not {renamed}"


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_conformance_file_subclasses_the_kit(plugin: Path) -> None:
    """Rule 'conformance': tests/test_conformance.py subclasses rolloutgym_testing's conformance kit."""
    tree = ast.parse((plugin / "tests" / "test_conformance.py").read_text())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "rolloutgym_testing"
        for alias in node.names
    }
    bases = {base.id for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for base in node.bases} & KIT_BASES
    assert bases and bases <= imported, (
        f"{plugin.name}: tests/test_conformance.py must subclass EnvConformanceTests or PolicyConformanceTests "
        "imported from rolloutgym_testing"
    )


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_plugin_module_holds_hook_implementations(plugin: Path) -> None:
    """Rule 'plugin.py': @hookimpl functions; module-level imports only the stdlib and rolloutgym_protocol."""
    tree = ast.parse((_package(plugin) / "plugin.py").read_text())
    hooks = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("rolloutgym_")]
    assert hooks, f"{plugin.name}: plugin.py defines no rolloutgym_* hook implementation"
    unmarked = [
        hook.name
        for hook in hooks
        if not any(
            getattr(decorator, "id", getattr(decorator, "attr", "")) == "hookimpl" for decorator in hook.decorator_list
        )
    ]
    assert not unmarked, f"{plugin.name}: plugin.py hooks without @hookimpl (pluggy ignores them): {unmarked}"
    for node, in_function in _runtime_imports(tree):
        if in_function or (isinstance(node, ast.ImportFrom) and node.level):
            continue
        names = [node.module] if isinstance(node, ast.ImportFrom) else [alias.name for alias in node.names]
        for module in names:
            top = str(module).split(".")[0]
            assert top in sys.stdlib_module_names or top in ("__future__", "rolloutgym_protocol"), (
                f"{plugin.name}: plugin.py imports {module} at module level; registering a plugin may import only "
                "the stdlib and rolloutgym_protocol: move the import into the function that needs it"
            )


def _lazy_init_shape(plugin: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(submod_attrs given to lazy_loader.attach, the names imported under TYPE_CHECKING), per module."""
    tree = ast.parse((_package(plugin) / "__init__.py").read_text())
    attached: dict[str, set[str]] | None = None
    checked: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom) and node.module in ("__future__", "typing"):
            continue
        if isinstance(node, ast.Import) and [alias.name for alias in node.names] == ["lazy_loader"]:
            continue
        if _is_type_checking(node):
            for statement in node.body:  # type: ignore[attr-defined]
                assert isinstance(statement, ast.ImportFrom) and statement.level == 1, (
                    f"{plugin.name}: __init__.py's TYPE_CHECKING block holds only 'from .module import names'"
                )
                checked.setdefault(str(statement.module), set()).update(alias.name for alias in statement.names)
            continue
        attached = _attached(plugin, node)
    assert attached is not None, f"{plugin.name}: __init__.py never calls lazy_loader.attach"
    return attached, checked


def _attached(plugin: Path, node: ast.stmt) -> dict[str, set[str]]:
    targets = "(__getattr__, __dir__, __all__)"
    message = (
        f"{plugin.name}: __init__.py is a docstring, TYPE_CHECKING imports and "
        f"'__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={{...}})' (a dict literal); found "
        f"{ast.unparse(node)[:120]!r} (see {GUIDE})"
    )
    assert isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == targets, message
    call = node.value
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "lazy_loader.attach", message
    assert [ast.unparse(argument) for argument in call.args] == ["__name__"], message
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    assert set(keywords) == {"submod_attrs"} and isinstance(keywords["submod_attrs"], ast.Dict), message
    value = ast.literal_eval(keywords["submod_attrs"])
    return {module: set(names) for module, names in value.items()}


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_init_exports_lazily_with_lazy_loader(plugin: Path) -> None:
    """Rule 'lazy __init__': lazy_loader.attach, the same names under TYPE_CHECKING, lazy_loader declared."""
    attached, checked = _lazy_init_shape(plugin)
    assert attached == checked, (
        f"{plugin.name}: the TYPE_CHECKING imports of __init__.py must name exactly what submod_attrs exports "
        f"(type checkers read one, lazy_loader the other): attached {attached}, imported {checked}"
    )
    for module in attached:
        path = _package(plugin) / (module.replace(".", "/") + ".py")
        assert path.is_file(), f"{plugin.name}: submod_attrs names a module {module!r} that does not exist"
    assert "lazy-loader" in _main_dependencies(plugin), (
        f"{plugin.name}: __init__.py imports lazy_loader: add 'lazy_loader>=0.4' to its dependencies"
    )


_CHEAP_IMPORT = """
import json, sys
baseline = set(sys.modules)
import lazy_loader, rolloutgym_protocol
allowed = set(sys.modules)
import {package}
own = sorted(m for m in sys.modules if m.startswith("{package}."))
import {package}.plugin
extra = sorted(
    m for m in set(sys.modules) - allowed
    if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "{package}"
)
print(json.dumps({{"own": own, "extra": extra}}))
"""


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_importing_the_package_and_its_plugin_module_is_cheap(plugin: Path) -> None:
    """Rule 'lazy __init__': `import pkg` imports none of its modules; `pkg.plugin` nothing but the protocol."""
    package = f"rolloutgym_{plugin.name}"
    result = subprocess.run(
        [sys.executable, "-c", _CHEAP_IMPORT.format(package=package)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["own"] == [], f"{plugin.name}: 'import {package}' imported {found['own']}; export names lazily"
    assert found["extra"] == [], (
        f"{plugin.name}: registering the plugin (import {package}.plugin, as 'rolloutgym list' does) imported "
        f"{found['extra'][:10]}; keep heavy imports inside the functions that need them"
    )


_RESOLVE = """
import importlib, json, sys
failures = []
for package in sys.argv[1:]:
    module = importlib.import_module(package)
    for name in module.__all__:
        try:
            getattr(module, name)
        except Exception as error:
            failures.append(f"{package}.{name}: {type(error).__name__}: {error}"[:300])
print(json.dumps(failures))
"""


def test_every_exported_name_resolves() -> None:
    """Rule 'lazy __init__': each name in a plugin's __all__ imports (with the test extras installed)."""
    packages = [f"rolloutgym_{plugin.name}" for plugin in PLUGINS]
    result = subprocess.run(
        [sys.executable, "-c", _RESOLVE, *packages], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    failures = json.loads(result.stdout.strip().splitlines()[-1])
    assert failures == [], "names in __all__ that do not resolve:\n" + "\n".join(failures)


@cache
def _import_names_by_distribution() -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    for module, distributions in _packages_distributions().items():
        for distribution in distributions:
            names.setdefault(canonicalize_name(distribution), set()).add(module)
    return names


@cache
def _packages_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _distributions_of(module: str) -> set[str]:
    """The distributions that provide top-level module ``module`` (editable installs: by name)."""
    found = _packages_distributions().get(module, [])
    return {canonicalize_name(distribution) for distribution in found} | {canonicalize_name(module)}


def _undeclared_imports(plugin: Path) -> list[str]:
    main, extras = _main_dependencies(plugin), _extras(plugin)
    problems = []
    for path in _sources(plugin):
        relative = str(path.relative_to(plugin.parent.parent))
        if relative in FOREIGN_SOURCES:
            continue
        for node, in_function in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue
            modules = [node.module] if isinstance(node, ast.ImportFrom) else [alias.name for alias in node.names]
            for module in modules:
                top = str(module).split(".")[0]
                if top in sys.stdlib_module_names or top in ("__future__", f"rolloutgym_{plugin.name}"):
                    continue
                provided_by = _distributions_of(top)
                if provided_by & main:
                    continue
                in_extras = sorted(extra for extra, names in extras.items() if provided_by & names)
                if [extra for extra in in_extras if extra != "test"]:
                    continue
                if in_extras and in_function and path.name == "testing.py":
                    continue  # testing.py may use the test extra inside its functions
                where = "only in the test extra" if in_extras else "not declared"
                problems.append(f"{relative}:{node.lineno} imports {top} ({where})")
    return problems


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_imports_are_declared_dependencies(plugin: Path) -> None:
    """Rule 'dependencies': src/ imports the stdlib, itself, or what pyproject.toml declares (main or an extra).

    The test extra is for tests: only a function of ``testing.py`` may import it.
    """
    problems = _undeclared_imports(plugin)
    assert not problems, (
        f"{plugin.name}: declare these in pyproject.toml (dependencies, or the extra that the importing code "
        "needs):\n" + "\n".join(problems)
    )


def _installed_closure(names: set[str]) -> set[str]:
    """``names`` and what they require (without extras), as far as it is installed here."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requirements = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requirements:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return seen


_BLOCKED_IMPORT = """
import importlib, sys
blocked = set(sys.argv[1].split(","))


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (not installed without extras)", name=name)
        return None


sys.meta_path.insert(0, Blocker())
for module in sys.argv[2:]:
    importlib.import_module(module)
"""


@pytest.mark.parametrize(
    "plugin", [plugin for plugin in PLUGINS if (_package(plugin) / "testing.py").is_file()], ids=_name
)
def test_testing_module_imports_on_a_normal_install(plugin: Path) -> None:
    """Rule 'testing.py': a public module imports without the extras (their packages are blocked here)."""
    main = _installed_closure(_main_dependencies(plugin))
    optional = set().union(*_extras(plugin).values()) - main
    blocked = set()
    for distribution in optional:
        blocked |= _import_names_by_distribution().get(distribution, set()) | {distribution.replace("-", "_")}
    blocked -= set(sys.stdlib_module_names)
    package = f"rolloutgym_{plugin.name}"
    modules = [package, f"{package}.plugin", f"{package}.testing"]
    result = subprocess.run(
        [sys.executable, "-c", _BLOCKED_IMPORT, ",".join(sorted(blocked)), *modules],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, (
        f"{plugin.name}: {package}.testing must import on a normal install (without {sorted(optional)}); "
        f"import test-only packages inside the functions that use them, with an error naming the extra:\n"
        + result.stderr[-1500:]
    )


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_graders_and_samplers_are_public(plugin: Path) -> None:
    """Rule 'public grading.py': graders and samplers live in public modules and are exported."""
    package = _package(plugin)
    attached, _ = _lazy_init_shape(plugin)
    exported = set().union(*attached.values()) if attached else set()
    for path in _sources(plugin):
        stem = path.stem
        assert stem.lstrip("_") not in {"grading", "grader", "graders", "sampler", "samplers"} or stem == stem.lstrip(
            "_"
        ), f"{plugin.name}: {path.name} is private; a plugin's grader is public grading.py, its sampler sampler.py"
        samplers = [
            node.name
            for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.ClassDef) and node.name.endswith("Sampler") and not node.name.startswith("_")
        ]
        relative = path.relative_to(package)
        for sampler in samplers:
            assert not any(part.startswith("_") and part != "__init__.py" for part in relative.parts), (
                f"{plugin.name}: sampler {sampler} is defined in private {relative}; samplers live in public "
                "modules (sampler.py, batch.py, engine.py, ...)"
            )
            assert sampler in exported, f"{plugin.name}: export {sampler} from the package (submod_attrs)"
    if (package / "grading.py").is_file():
        assert attached.get("grading"), f"{plugin.name}: export the grader's names from grading.py lazily"


def _import_graph(plugin: Path) -> dict[str, set[str]]:
    """Module -> the plugin's modules it imports at any point (function-level too; TYPE_CHECKING not)."""
    modules = {_module_name(plugin, path): path for path in _sources(plugin)}
    names = {name for name, _ in modules}
    graph: dict[str, set[str]] = {}
    for (name, is_package), path in modules.items():
        base = name.split(".") if is_package else name.split(".")[:-1]
        targets: set[str] = set()
        for node, _ in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                prefix = base[: len(base) - node.level + 1] if node.level else []
                module = ".".join(prefix + ([node.module] if node.module else []))
                candidates = [f"{module}.{alias.name}" for alias in node.names] + [module]
            for candidate in candidates:
                while candidate and candidate not in names:
                    candidate = candidate.rpartition(".")[0]
                if candidate and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_no_import_cycles(plugin: Path) -> None:
    """Rule 'no import cycles': counting function-level imports (not those under TYPE_CHECKING)."""
    cycle = _find_cycle(_import_graph(plugin))
    assert cycle is None, (
        f"{plugin.name}: import cycle {' -> '.join(cycle or [])}; move what both sides need into a third module, "
        "or import a name used only in annotations under TYPE_CHECKING"
    )


@pytest.mark.parametrize("plugin", PLUGINS, ids=_name)
def test_data_lives_in_data_files(plugin: Path) -> None:
    """Rule 'data is data': shipped files under data/, no module-level literal of more than 100 lines."""
    package = _package(plugin)
    stray = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*")
        if path.is_file()
        and path.suffix not in (".py", ".pyc")
        and path.name != "py.typed"
        and "data" not in path.relative_to(package).parts
    )
    assert not stray, f"{plugin.name}: data files belong under {package.name}/data/: {stray}"
    for path in _sources(plugin):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                assert lines <= LONGEST_LITERAL_LINES or not isinstance(
                    node.value, (ast.List, ast.Dict, ast.Tuple, ast.Set, ast.Constant)
                ), (
                    f"{plugin.name}: {path.relative_to(ROOT)}:{node.lineno} is a {lines}-line literal; tasks and "
                    "fixtures go into data/*.jsonl|json files read by a small module"
                )


def _guide_files() -> dict[str, str]:
    """The worked example of the guide: each code block after ``<!-- file: PATH -->``."""
    text = (ROOT / GUIDE).read_text()
    return dict(re.findall(r"<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```", text, flags=re.S))


_REGISTER_EXAMPLE = """
import importlib

from rolloutgym.registry import get_registry

# The example is not pip-installed here: register its plugin module as its entry point would.
get_registry().register(importlib.import_module("rolloutgym_mygame.plugin"), name="mygame")
"""


def test_guide_example_follows_the_skeleton_and_passes_its_conformance_tests(tmp_path: Path) -> None:
    """The guide's worked example is a complete plugin: every rule above holds, its conformance tests pass."""
    files = _guide_files()
    assert {"pyproject.toml", "src/rolloutgym_mygame/plugin.py", "tests/test_conformance.py"} <= set(files)
    plugin = tmp_path / "mygame"
    for relative, content in files.items():
        (plugin / relative).parent.mkdir(parents=True, exist_ok=True)
        (plugin / relative).write_text(content)
    rules = (
        test_layout,
        test_conformance_file_subclasses_the_kit,
        test_plugin_module_holds_hook_implementations,
        test_init_exports_lazily_with_lazy_loader,
        test_imports_are_declared_dependencies,
        test_graders_and_samplers_are_public,
        test_no_import_cycles,
        test_data_lives_in_data_files,
    )
    for rule in rules:
        rule(plugin)
    (plugin / "conftest.py").write_text(_REGISTER_EXAMPLE)
    source = str(plugin / "src")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=plugin,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and " passed" in result.stdout, result.stdout[-3000:] + result.stderr[-2000:]
