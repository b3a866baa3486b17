"""No function or method in the shipped sources is longer than 80 lines (``def`` to its last line).

Long functions get split into named helpers; the only exceptions are measured hot loops, listed in
``HOT_LOOPS`` with the reason they stay in one piece. The walk parses every ``.py`` file under
``protocol/src``, ``packages/*/src`` and ``plugins/*/src`` with :mod:`ast` (no imports, well under a second).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 80
SOURCE_ROOTS = ["protocol/src", "packages/*/src", "plugins/*/src"]

# (path relative to the repo root, function name) -> why it may exceed LIMIT.
HOT_LOOPS = {
    ("packages/rolloutgym/src/rolloutgym/rollouts/_episode.py", "arun_loop"): (
        "the episode loop every rollout runs, one coroutine per group member by design: benchmarks/README.md "
        "(group_throughput, 1.6x the bare-asyncio floor) measured the gain of no second frame per member"
    ),
}


def _source_files() -> list[Path]:
    return sorted(path for pattern in SOURCE_ROOTS for folder in ROOT.glob(pattern) for path in folder.rglob("*.py"))


def _function_sizes(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function and method in ``path``."""
    sizes: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                sizes.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return sizes


def test_the_walk_sees_the_sources() -> None:
    files = {path.relative_to(ROOT).as_posix() for path in _source_files()}
    assert "packages/rolloutgym/src/rolloutgym/cli/running.py" in files
    assert any(name.startswith("protocol/src/") for name in files)
    assert any(name.startswith("plugins/trl/src/") for name in files)


def test_sizes_count_from_def_to_the_last_line(tmp_path: Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        "@decorator\ndef short():\n    return 1\n\n\nclass Box:\n    async def method(self):\n"
        "        def inner():\n            pass\n\n        return inner\n",
        encoding="utf-8",
    )
    assert _function_sizes(source) == [("short", 2, 2), ("Box.method", 7, 5), ("Box.method.inner", 8, 2)]


def test_no_function_is_longer_than_the_limit() -> None:
    too_long = []
    for path in _source_files():
        relative = path.relative_to(ROOT).as_posix()
        for name, line, length in _function_sizes(path):
            if length <= LIMIT:
                continue
            if (relative, name) in HOT_LOOPS:
                continue
            too_long.append(f"{relative}:{line} {name} is {length} lines")
    assert not too_long, (
        f"functions over {LIMIT} lines (split them into named helpers; only a measured hot loop may go into "
        "HOT_LOOPS with the reason):\n" + "\n".join(too_long)
    )
