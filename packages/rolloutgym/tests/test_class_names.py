"""No two classes of the repository share a name for different things (issue 30, "same names").

Every module-level class of the source trees (``protocol/src``, ``packages/*/src``,
``plugins/*/src``) is read with ``ast`` (nothing is imported), so a new class whose name is
already taken elsewhere fails here with both places; rename one, or add it to ``ALLOWED``
with the reason the two may share the name.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# name -> (the modules that define it, why they may share it). Keep this short.
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "Reply": (
        frozenset(
            {"plugins/harness/src/rolloutgym_harness/wire.py", "plugins/openai/src/rolloutgym_openai/testing.py"}
        ),
        "one idea (a model's answer: content and tool calls) in two plugins, which may not import each other",
    ),
}


def _source_files() -> list[Path]:
    roots = [
        ROOT / "protocol" / "src",
        *sorted((ROOT / "packages").glob("*/src")),
        *sorted((ROOT / "plugins").glob("*/src")),
    ]
    files = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root).parts
            if "data" in relative:  # task data (e.g. the code plugin's buggy repositories), not the package
                continue
            files.append(path)
    return files


def _class_homes() -> dict[str, set[str]]:
    homes: dict[str, set[str]] = defaultdict(set)
    for path in _source_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                homes[node.name].add(path.relative_to(ROOT).as_posix())
    return homes


def test_the_scan_sees_the_repository():
    homes = _class_homes()
    assert "packages/rolloutgym/src/rolloutgym/registry/registry.py" in homes["Registry"]
    assert "protocol/src/rolloutgym_protocol/records.py" in homes["Trajectory"]
    assert len(homes) > 200


def test_no_class_name_names_two_things():
    shared = {
        name: sorted(modules)
        for name, modules in _class_homes().items()
        if len(modules) > 1 and (name not in ALLOWED or modules != ALLOWED[name][0])
    }
    assert shared == {}, f"classes defined in more than one module (rename one, or justify it in ALLOWED): {shared}"


def test_every_allowed_name_is_still_shared():
    homes = _class_homes()
    stale = sorted(name for name, (modules, _) in ALLOWED.items() if homes.get(name) != set(modules))
    assert stale == [], f"these ALLOWED entries no longer match the code; drop or update them: {stale}"
