"""The core's import structure: no import cycle between its modules, no private name shared across subpackages.

Read from the source with ``ast``. Module-level imports are what Python executes on import, so a
cycle among them is an error; imports inside functions are counted separately (see
:func:`function_level_cycles`) and allowed only inside ``KNOWN_FUNCTION_LEVEL_AREAS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import rolloutgym

SRC = Path(rolloutgym.__file__).parent.parent
MODULES = {
    ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__"): path
    for path in sorted((SRC / "rolloutgym").rglob("*.py"))
}
# Where a function-level import loop may remain (checked so that none appears elsewhere): none
# is left (the last one, between serve's app and its OpenEnv routes, is gone).
KNOWN_FUNCTION_LEVEL_AREAS: tuple[str, ...] = ()


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports() -> list[tuple[str, str, str | None, bool]]:
    """``(importer, imported module, imported name or None, inside a function)`` for every core-internal import."""
    found = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        skip, nested = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip |= {id(sub) for sub in ast.walk(node)}
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                nested |= {id(sub) for sub in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            pairs = []
            if isinstance(node, ast.Import):
                pairs = [(alias.name, None) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(module, node)
                pairs = [(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base, a.name) for a in node.names]
            for name, imported in pairs:
                target = _owner(name) if name.split(".")[0] == "rolloutgym" else None
                if target and target != module:
                    found.append((module, target, imported, id(node) in nested))
    return found


def _cycles(edges: dict[str, set[str]]) -> set[tuple[str, ...]]:
    order, low, stack, cycles = {}, {}, [], set()

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                cycles.add(tuple(sorted(component)))

    for node in MODULES:
        if node not in order:
            visit(node)
    return cycles


def test_no_import_cycle_at_module_level():
    edges: dict[str, set[str]] = {}
    for importer, target, _, nested in _imports():
        if not nested:
            edges.setdefault(importer, set()).add(target)
    assert _cycles(edges) == set()


def function_level_cycles() -> set[tuple[str, ...]]:
    edges: dict[str, set[str]] = {}
    for importer, target, _, _ in _imports():
        edges.setdefault(importer, set()).add(target)
    return _cycles(edges)


def test_function_level_import_loops_are_only_the_known_ones():
    """No loop among imports made inside functions, outside the known areas (none)."""
    outside = [
        cycle
        for cycle in function_level_cycles()
        if not any(all(module.startswith(area) for module in cycle) for area in KNOWN_FUNCTION_LEVEL_AREAS)
    ]
    assert outside == []


def test_no_private_name_crosses_subpackages():
    def area(module: str) -> str:
        return module.split(".")[1] if "." in module else ""

    crossing = []
    for importer, target, imported, _ in _imports():
        private = [part for part in target.split(".")[1:] if part.startswith("_") and not part.startswith("__")]
        if imported and imported.startswith("_") and not imported.startswith("__"):
            private.append(imported)
        if private and area(importer) != area(target):
            crossing.append(f"{importer} imports {target}:{imported}")
    assert crossing == []
