"""Every ``pip install`` hint names a package and extras that exist, and works from where the user stands (issue 32).

No index serves rolloutgym or its plugins, so a hint for one of them must name the checkout's
folder: every message builds it with ``rolloutgym.install_hints.pip_install`` (checked from the
source with ``ast``: no string literal other than a docstring spells such a command itself), each
``pip_install`` call names a project of this repository and extras it declares, and the built
command names a folder that exists, relative from inside the checkout and absolute from outside.
The remaining hints in the source (docstrings, third-party packages) are read as text: each
rolloutgym distribution they name must be a project of this repository, each extra must be
declared by that project, and each ``./plugins/NAME`` / ``./packages/NAME`` folder must exist.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from rolloutgym.install_hints import checkout_root, pip_install

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*ROOT.glob("packages/*/src"), *ROOT.glob("plugins/*/src"), ROOT / "protocol" / "src"]
HINT = re.compile(r"pip install ([^\n\"`)]*)")
OURS = re.compile(r"(?<![\w./-])'?(rolloutgym(?:-[a-z0-9]+)*)(\[[A-Za-z0-9_,-]+\])?")
FOLDER = re.compile(r"\./(plugins|packages)/([A-Za-z0-9_-]+)(\[[A-Za-z0-9_,-]+\])?")


def projects() -> dict[str, tuple[Path, set[str]]]:
    found = {}
    for pyproject in [*ROOT.glob("plugins/*/pyproject.toml"), *ROOT.glob("packages/*/pyproject.toml")]:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        found[project["name"]] = (pyproject.parent, set(project.get("optional-dependencies", {})))
    found.setdefault("rolloutgym-protocol", (ROOT / "protocol", set()))
    return found


def hints() -> list[tuple[str, str]]:
    found = []
    for source in SOURCES:
        for path in source.rglob("*.py"):
            for match in HINT.finditer(path.read_text(encoding="utf-8")):
                found.append((f"{path.relative_to(ROOT)}", match.group(1)))
    return found


def problems_of(where: str, text: str, known: dict[str, tuple[Path, set[str]]]) -> list[str]:
    problems = []
    for name, extras in OURS.findall(text):
        if "{" in name:
            continue
        if name not in known:
            problems.append(f"{where}: 'pip install {text}' names {name}, which is no project of this repository")
            continue
        wanted = {extra for extra in extras.strip("[]").split(",") if extra}
        if wanted - known[name][1]:
            problems.append(f"{where}: {name} has no extra {sorted(wanted - known[name][1])}")
    for kind, folder, extras in FOLDER.findall(text):
        if "{" in folder or folder.isupper():
            continue  # a placeholder: ./plugins/{folder}, ./plugins/NAME
        pyproject = ROOT / kind / folder / "pyproject.toml"
        if not pyproject.is_file():
            problems.append(f"{where}: ./{kind}/{folder} is no package folder of the checkout")
            continue
        declared = set(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("optional-dependencies", {}))
        wanted = {extra for extra in extras.strip("[]").split(",") if extra}
        if wanted - declared:
            problems.append(f"{where}: ./{kind}/{folder} has no extra {sorted(wanted - declared)}")
    return problems


def test_every_install_hint_names_what_exists() -> None:
    known = projects()
    found = hints()
    assert len(found) > 30  # the hints are really read
    problems = [problem for where, text in found for problem in problems_of(where, text, known)]
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_wrong_name_or_extra() -> None:
    known = projects()
    assert problems_of("x", "rolloutgym-workflw", known)
    assert problems_of("x", "'rolloutgym[reprot]'", known)
    assert problems_of("x", "./plugins/nope", known)
    assert problems_of("x", "'./packages/rolloutgym[nope]'", known)
    assert not problems_of("x", "'rolloutgym-code[humaneval]' ./plugins/sql", known)


# A literal hint for one of this project's packages (not a docstring): it must be built by pip_install.
LITERAL = re.compile(r"pip install\s+(?:--\S+\s+)*'?(\.{1,2}/|rolloutgym\b)")
# Files of other work streams that still spell their hints by hand (issue 32); this list only shrinks.
NOT_YET: set[str] = set()


def _trees() -> list[tuple[str, ast.Module]]:
    return [
        (str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8")))
        for source in SOURCES
        for path in source.rglob("*.py")
    ]


def literal_hints(tree: ast.Module) -> list[int]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and LITERAL.search(node.value)
    ]


def pip_install_calls(tree: ast.Module) -> list[tuple[int, list[str]]]:
    return [
        (node.lineno, [arg.value if isinstance(arg, ast.Constant) else "?" for arg in node.args])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "pip_install"
    ]


def test_every_hint_for_our_packages_is_built_by_pip_install() -> None:
    trees = _trees()
    spelled = {where: lines for where, tree in trees if (lines := literal_hints(tree))}
    assert set(spelled) <= NOT_YET, {where: lines for where, lines in spelled.items() if where not in NOT_YET}
    assert set(spelled) == NOT_YET, f"fixed, drop from NOT_YET: {sorted(NOT_YET - set(spelled))}"
    known = projects()
    calls = [(where, line, args) for where, tree in trees for line, args in pip_install_calls(tree)]
    assert len(calls) >= 15  # the calls are really read
    for where, line, (distribution, *extras) in calls:
        if distribution == "?":  # the registry's hint, from the plugins' metadata (below)
            continue
        assert distribution in known, f"{where}:{line}: pip_install names {distribution}, no project of this repository"
        assert set(extras) <= known[distribution][1], f"{where}:{line}: {distribution} has no extra {extras}"
    from rolloutgym.registry._hints import known_plugins

    named = {distribution for names in known_plugins().values() for distribution in names.values()}
    assert named <= set(known), named - set(known)


def test_the_literal_check_catches_a_spelled_hint() -> None:
    tree = ast.parse('"""pip install ./plugins/sql"""\nx = "pip install ./plugins/sql"\ny = "pip install torch"\n')
    assert literal_hints(tree) == [2]
    assert literal_hints(ast.parse("z = \"needs it: pip install 'rolloutgym-code[humaneval]'\"")) == [1]


def _built_in(cwd: Path, distribution: str, *extras: str) -> str:
    code = f"from rolloutgym.install_hints import pip_install; print(pip_install({distribution!r}, *{extras!r}))"
    result = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize(
    ("distribution", "extras"),
    [
        ("rolloutgym-code", ("humaneval",)),
        ("rolloutgym", ("report",)),
        ("rolloutgym-protocol", ()),
        ("rolloutgym-sql", ()),
    ],
)
def test_a_hint_names_a_folder_that_exists_from_where_the_user_stands(
    tmp_path: Path, distribution: str, extras: tuple[str, ...]
) -> None:
    assert checkout_root() == ROOT  # the suite runs from an install of this checkout
    for cwd in (ROOT, ROOT / "docs", tmp_path):
        command = _built_in(cwd, distribution, *extras)
        words = shlex.split(command)
        assert words[:2] == ["pip", "install"] and len(words) == 3, command
        folder, _, wanted = words[2].partition("[")
        assert (cwd / folder / "pyproject.toml").is_file(), (cwd, command)
        declared = set(
            tomllib.loads((cwd / folder / "pyproject.toml").read_text())["project"].get("optional-dependencies", {})
        )
        assert set(filter(None, wanted.rstrip("]").split(","))) == set(extras) <= declared, command
        assert folder.startswith(("./", "../")) == (cwd != tmp_path), command  # relative inside the checkout only
    assert _built_in(ROOT, "rolloutgym-code", "humaneval") == "pip install './plugins/code[humaneval]'"


def _known_plugins_script() -> Any:
    spec = importlib.util.spec_from_file_location("known_plugins", ROOT / "scripts" / "known_plugins.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_of_uninstalled_plugins_is_generated_from_every_plugin() -> None:
    """data/known_plugins.json is what scripts/known_plugins.py makes of plugins/*/pyproject.toml today."""
    script = _known_plugins_script()
    assert script.TABLE.read_text(encoding="utf-8") == script.render(), (
        "the core's table of plugins is out of date: run python scripts/known_plugins.py"
    )
    from rolloutgym.registry._hints import known_plugins

    assert known_plugins()["envs"]["tau2"] == "rolloutgym-benchmarks" and known_plugins()["policies"]["hf"]


def test_every_plugin_declares_exactly_what_it_registers() -> None:
    """The names a plugin's pyproject declares (rolloutgym.envs/.policies/.templates) are those it registers."""
    from rolloutgym.registry import Registry

    registry = Registry()
    registered: dict[tuple[str, str], set[str]] = {}
    named = [
        *(("envs", entry.spec.namespace, entry) for entry in registry.env_specs().values()),
        *(("policies", name, entry) for name, entry in registry.policy_specs().items()),
        *(("templates", name, entry) for name, entry in registry.template_specs().items()),
    ]
    for kind, name, entry in named:
        registered.setdefault((entry.plugin.distribution or "", kind), set()).add(name)
    script = _known_plugins_script()
    for plugin in sorted((ROOT / "plugins").glob("*/pyproject.toml")):
        project = tomllib.loads(plugin.read_text(encoding="utf-8"))["project"]
        declared = project.get("entry-points", {})
        for kind, group in script.GROUPS.items():
            wanted = registered.get((project["name"], kind), set())
            assert set(declared.get(group, {})) == wanted, (
                f"{plugin.parent.name}: pyproject declares {kind} {sorted(declared.get(group, {}))} in "
                f'[project.entry-points."{group}"] but the plugin registers {sorted(wanted)}: declare each one, '
                "then run python scripts/known_plugins.py"
            )


@pytest.mark.parametrize(
    ("name", "distribution"),
    [
        ("harness", "rolloutgym-harness"),
        ("tau2", "rolloutgym-benchmarks"),
        ("agentdojo", "rolloutgym-benchmarks"),
        ("ifeval", "rolloutgym-benchmarks"),
        ("scienceworld", "rolloutgym-benchmarks"),
    ],
)
def test_the_hint_names_every_plugin_even_uninstalled(name: str, distribution: str) -> None:
    """The five the hand-written table missed (issue 46), read from the generated table as if nothing were installed."""
    from rolloutgym.registry import Registry, _hints

    assert _hints.known_plugins()["envs" if name != "harness" else "policies"][name] == distribution
    core_only = Registry(load_entry_points=False)
    assert core_only.install_hint(name) == f"Install it with: {pip_install(distribution)}"


def test_the_missing_plugin_message_carries_the_hint() -> None:
    from rolloutgym.registry import Registry

    core_only = Registry(load_entry_points=False)  # as if no plugin distribution were installed
    assert core_only.install_hint("sql") == f"Install it with: {pip_install('rolloutgym-sql')}"
    assert "rolloutgym-sql " not in core_only.install_hint("sql")  # no index serves it: no bare distribution name


# Pages of other work streams that still name bare distributions (issue 32); this list only shrinks.
DOCS_NOT_YET: set[str] = set()
BARE = re.compile(r"^'?(rolloutgym(?:-[a-z0-9-]+)?)(\[[A-Za-z0-9_,-]+\])?'?$")
SEGMENT_END = re.compile(r"[`#;)\n]|&&| or |\. |\.$|, ")


def bare_names(text: str, known: set[str]) -> list[str]:
    """Our distributions a ``pip install`` of ``text`` names bare (no index serves them)."""
    found = []
    for match in re.finditer(r"pip install", text):
        end = SEGMENT_END.search(text, match.end())
        for word in text[match.end() : end.start() if end else len(text)].split():
            bare = BARE.match(word)
            if bare and bare.group(1) in known:
                found.append(word)
    return found


def test_the_docs_install_our_packages_from_the_checkout() -> None:
    known = set(projects())
    pages = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("plugins/*/README.md")]
    pages += [*ROOT.glob("packages/*/README.md")]
    found = {}
    for page in pages:
        names = [name for line in page.read_text(encoding="utf-8").splitlines() for name in bare_names(line, known)]
        if names:
            found[str(page.relative_to(ROOT))] = names
    assert set(found) <= DOCS_NOT_YET, {page: names for page, names in found.items() if page not in DOCS_NOT_YET}
    assert set(found) == DOCS_NOT_YET, f"fixed, drop from DOCS_NOT_YET: {sorted(DOCS_NOT_YET - set(found))}"
    assert bare_names("pip install 'rolloutgym-sql[duckdb]' rolloutgym", known) == [
        "'rolloutgym-sql[duckdb]'",
        "rolloutgym",
    ]
    assert bare_names("pip install ./plugins/sql  # or rolloutgym-sql", known) == []
