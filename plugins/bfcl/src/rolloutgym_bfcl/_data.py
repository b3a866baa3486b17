"""Reading BFCL's data from the installed ``bfcl-eval`` package, lazily and without importing it.

The question files and possible answers are JSON lines inside the package
(``bfcl_eval/data``). They are read straight from disk: importing ``bfcl_eval.utils`` (the
package's own loader) creates ``result/``, ``score/`` and lock directories next to the
installed package and takes a file lock per read, which a training run should not do.
``tests/test_bfcl_data.py`` checks that what we read equals the package's
``load_dataset_entry`` / ``load_ground_truth_entry`` on every category.
"""

from __future__ import annotations

import copy
import functools
import importlib.metadata
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ._categories import CATEGORIES, Category, category_for_env

__all__ = ["BfclTask", "INSTALL_HINT", "PACKAGE", "data_dir", "load_tasks", "package_version", "tasks_for_env"]

PACKAGE = "bfcl-eval"
PINNED = "2026.3.23"
# No square brackets: the CLI prints messages through rich, which would take "[bfcl]" for markup.
INSTALL_HINT = (
    f"install the 'bfcl' extra of rolloutgym-bfcl (pip install {PACKAGE}=={PINNED}), or, without the inference SDKs "
    f"it depends on: pip install --no-deps {PACKAGE}=={PINNED} mpmath"
)
VERSION_PREFIX = "BFCL_v4"


@dataclass(frozen=True, eq=False)
class BfclTask:
    """One BFCL test entry.

    Attributes:
        id: BFCL's entry id (``simple_python_0``, ``live_multiple_12-4-3``).
        split: always ``test`` (BFCL is an evaluation set).
        category: BFCL's category name (``simple_python``).
        question: the turns; each turn is a list of chat messages (single-turn: one turn).
        functions: the function docs as BFCL's checker sees them (no language hint added).
        ground_truth: single-turn: the possible answers (``[{name: {param: [values]}}]``);
            multi-turn: per turn the reference calls as Python call strings; ``[]`` for
            the relevance categories.
        initial_config: multi-turn: each backend class's scenario.
        involved_classes: multi-turn: the backend classes (``GorillaFileSystem``, ...).
        held_out: multi-turn ``miss_func``: turn index -> function docs added at that turn.
    """

    id: str
    category: str
    question: list[list[dict[str, Any]]] = field(repr=False)
    functions: list[dict[str, Any]] = field(repr=False)
    ground_truth: list[Any] = field(repr=False, default_factory=list)
    initial_config: dict[str, Any] = field(repr=False, default_factory=dict)
    involved_classes: tuple[str, ...] = ()
    held_out: dict[int, list[dict[str, Any]]] = field(repr=False, default_factory=dict)
    split: str = "test"

    def __str__(self) -> str:
        return self.id


def package_version() -> str | None:
    """The installed ``bfcl-eval`` version, or None (reads metadata only)."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None


def package_dir() -> Path:
    """The installed ``bfcl_eval`` package folder (found, not imported)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the bfcl environments read their tasks and backends from the '{PACKAGE}' package, which is not "
            f"installed: {INSTALL_HINT}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def data_dir() -> Path:
    """``bfcl_eval/data`` of the installed package."""
    path = package_dir() / "data"
    if not path.is_dir():
        raise ConfigError(
            f"the installed '{PACKAGE}' ({package_version()}) has no data folder at {path}; reinstall it: "
            f"{INSTALL_HINT}"
        )
    return path


@functools.cache
def _read_lines(path: Path) -> tuple[dict[str, Any], ...]:
    with path.open(encoding="utf-8") as handle:
        return tuple(json.loads(line) for line in handle if line.strip())


@functools.cache
def _multi_turn_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    return _read_lines(data_dir() / "multi_turn_func_doc" / MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name])


def _multi_turn_functions(entry: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    """The function docs of the involved classes, minus those held out until a later turn."""
    functions = [copy.deepcopy(doc) for name in entry["involved_classes"] for doc in _multi_turn_docs(name)]
    held_out: dict[int, list[dict[str, Any]]] = {}
    for turn, names in entry.get("missed_function", {}).items():
        moved = held_out.setdefault(int(turn), [])
        for name in names:
            for position, doc in enumerate(functions):
                if doc["name"] == name:
                    moved.append(functions.pop(position))
                    break
    return functions, held_out


@functools.cache
def load_tasks(bfcl_category: str) -> tuple[BfclTask, ...]:
    """Every entry of one BFCL category, with its possible answers (cached per process)."""
    category = next((item for item in CATEGORIES if item.bfcl == bfcl_category), None)
    if category is None:
        raise ConfigError(
            f"unknown BFCL category {bfcl_category!r}; served: {', '.join(item.bfcl for item in CATEGORIES)}"
        )
    root = data_dir()
    entries = _read_lines(root / f"{VERSION_PREFIX}_{bfcl_category}.json")
    answers: tuple[dict[str, Any], ...] = ()
    if category.kind in ("ast", "multi_turn"):
        answers = _read_lines(root / "possible_answer" / f"{VERSION_PREFIX}_{bfcl_category}.json")
        if len(answers) != len(entries):
            raise ConfigError(
                f"{PACKAGE} {package_version()}: {bfcl_category} has {len(entries)} questions but {len(answers)} "
                "possible answers"
            )
    tasks = []
    for index, entry in enumerate(entries):
        # Possible answers align with the questions by position (BFCL's own rule; a few ids differ in form).
        ground_truth = answers[index]["ground_truth"] if answers else []
        if category.kind == "multi_turn":
            functions, held_out = _multi_turn_functions(entry)
            tasks.append(
                BfclTask(
                    id=entry["id"],
                    category=bfcl_category,
                    question=entry["question"],
                    functions=functions,
                    ground_truth=ground_truth,
                    initial_config=entry.get("initial_config", {}),
                    involved_classes=tuple(entry["involved_classes"]),
                    held_out=held_out,
                )
            )
        else:
            tasks.append(
                BfclTask(
                    id=entry["id"],
                    category=bfcl_category,
                    question=entry["question"],
                    functions=entry["function"],
                    ground_truth=ground_truth,
                )
            )
    return tuple(tasks)


def tasks_for_env(env_id: str) -> list[BfclTask]:
    """The tasks of ``bfcl/<name>-v0``."""
    category: Category = category_for_env(env_id)
    return list(load_tasks(category.bfcl))


def _loader(category: Category) -> Any:
    def load() -> list[BfclTask]:
        return list(load_tasks(category.bfcl))

    load.__name__ = load.__qualname__ = f"tasks_{category.bfcl}"
    load.__doc__ = f"The tasks of {category.env_id} (BFCL category {category.bfcl})."
    return load


# One task loader per category (``tasks_simple_python``, ...), named by the EnvSpecs.
for _category in CATEGORIES:
    globals()[f"tasks_{_category.bfcl}"] = _loader(_category)
del _category
