"""The rooms of the core and who may import whom (docs/explanation/design.md, "Rooms").

Every module of ``rolloutgym`` belongs to one room; a room may import only rooms on a lower
floor (``FLOORS``), at module level or inside a function alike. Read from the source with
``ast`` (the import walker of ``test_core_imports.py``, which also checks for cycles), so a new
arrow that climbs a floor, or a module that belongs to no room, fails here with its name.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import rolloutgym

_walker_spec = importlib.util.spec_from_file_location("_core_imports", Path(__file__).with_name("test_core_imports.py"))
assert _walker_spec is not None and _walker_spec.loader is not None
walker = importlib.util.module_from_spec(_walker_spec)
_walker_spec.loader.exec_module(walker)

# Lowest first. A room imports only rooms of lower floors (never its own floor's other rooms).
FLOORS: list[tuple[str, ...]] = [
    ("install_hints",),
    ("errors", "types", "validation", "spaces", "datasets", "graders", "mixtures", "serve.client"),
    ("envs", "registry"),
    ("verifiers", "evals", "sandboxes"),
    ("declarative",),
    ("sources",),
    ("rollouts", "runs"),
    ("llm", "builtin"),
    ("executors", "rescore", "export", "report", "checks"),
    ("runner",),
    ("serve", "platform"),
    ("cli",),
    ("__main__", "rolloutgym"),
]
# The client side of `rolloutgym serve` (what a remote env needs): below the registry and sources.
SERVE_CLIENT = {"rolloutgym.serve", "rolloutgym.serve.client", "rolloutgym.serve._codec", "rolloutgym.serve._errors"}
SERVE_CLIENT |= {"rolloutgym.serve._channel", "rolloutgym.serve.client_async", "rolloutgym.serve.client_requests"}
SERVE_CLIENT |= {"rolloutgym.serve._client_session"}
FLOOR = {room: floor for floor, rooms in enumerate(FLOORS) for room in rooms}


def room(module: str) -> str:
    if module in SERVE_CLIENT:
        return "serve.client"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_module_is_in_a_room():
    homeless = sorted(module for module in walker.MODULES if room(module) not in FLOOR)
    assert homeless == [], f"add these rooms to FLOORS (and to the design doc's rooms): {homeless}"


def test_imports_only_go_down():
    climbing = sorted(
        {
            f"{importer} -> {target} ({room(importer)} may not import {room(target)})"
            for importer, target, _, _ in walker._imports()
            if room(importer) != room(target) and FLOOR[room(target)] >= FLOOR[room(importer)]
        }
    )
    assert climbing == []


def test_the_arrows_that_made_the_ring_are_gone():
    """The registry builds no remote env through the server package, and serve reaches sources directly."""
    arrows = {(room(importer), room(target)) for importer, target, _, _ in walker._imports()}
    assert ("registry", "serve") not in arrows and ("registry", "sources") not in arrows
    assert ("serve", "executors") not in arrows and ("sources", "executors") not in arrows


def test_the_rules_are_the_design_docs():
    text = (Path(rolloutgym.__file__).parents[4] / "docs" / "explanation" / "design.md").read_text(encoding="utf-8")
    for floor, rooms in enumerate(FLOORS):
        line = f"{floor:>2} | " + ", ".join(f"`{name}`" for name in rooms)
        assert line in text, f"design.md's rooms table lacks the line {line!r}"


def test_the_core_never_imports_the_platform():
    """The platform server is its own building (rolloutgym-platform): no core module names it, at any level, and
    the core's own ``platform`` room is the client side only (no database, no server framework)."""
    import ast

    named, server_stack = [], []
    for module, path in walker.MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            named += [f"{module}: {name}" for name in names if name.split(".")[0] == "rolloutgym_platform"]
            if room(module) == "platform":
                stack = {"sqlalchemy", "alembic", "psycopg", "starlette", "uvicorn"}
                server_stack += [f"{module}: {name}" for name in names if name.split(".")[0] in stack]
    assert named == [] and server_stack == []
