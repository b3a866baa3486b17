"""Tasks, function docs and tool definitions: equal to what bfcl-eval's own loaders give."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from rolloutgym_bfcl import CATEGORIES, load_tasks, package_version, tasks_for_env, tool_definitions
from rolloutgym_protocol.errors import ConfigError


@pytest.mark.parametrize("category", CATEGORIES, ids=lambda category: category.name)
def test_tasks_equal_the_package_loaders(category: Any, reference_utils: Any) -> None:
    ours = load_tasks(category.bfcl)
    entries = reference_utils.load_dataset_entry(
        category.bfcl, include_prereq=False, include_language_specific_hint=False
    )
    assert [task.id for task in ours] == [entry["id"] for entry in entries]
    for task, entry in zip(ours, entries, strict=True):
        assert task.question == entry["question"], task.id
        assert task.functions == entry["function"], task.id
        if category.kind == "multi_turn":
            assert task.involved_classes == tuple(entry["involved_classes"])
            assert task.initial_config == entry.get("initial_config", {})
            assert task.held_out == {int(turn): docs for turn, docs in entry.get("missed_function", {}).items()}
    if category.kind in ("ast", "multi_turn"):
        answers = reference_utils.load_ground_truth_entry(category.bfcl)
        assert [task.ground_truth for task in ours] == [answer["ground_truth"] for answer in answers]
    else:
        assert all(task.ground_truth == [] for task in ours)


@pytest.mark.parametrize("name", ["simple", "simple-java", "simple-javascript", "live-multiple", "multi-turn-base"])
def test_tool_descriptions_carry_bfcls_language_hints(name: str, reference_utils: Any) -> None:
    category = next(category for category in CATEGORIES if category.name == name)
    hinted = reference_utils.load_dataset_entry(
        category.bfcl, include_prereq=False, include_language_specific_hint=True
    )
    for task, entry in list(zip(load_tasks(category.bfcl), hinted, strict=True))[:40]:
        tools = tool_definitions(task.functions, category.language)
        for tool, function in zip(tools, entry["function"], strict=True):
            definition = tool["function"]
            assert definition["name"] == function["name"].replace(".", "_")
            assert definition["description"] == function["description"]
            assert definition["parameters"]["type"] == "object"
            for param, details in function["parameters"]["properties"].items():
                ours = definition["parameters"]["properties"][param]
                suffix = " This is a float type value." if details.get("type") == "float" else ""
                assert (
                    ours.get("description") == (details["description"] + suffix if "description" in details else None)
                    or not suffix
                )
                assert ours["type"] in ("string", "integer", "number", "boolean", "array", "object")


def test_tool_types_follow_bfcls_openapi_mapping() -> None:
    functions = [
        {
            "name": "geo.distance",
            "description": "Distance.",
            "parameters": {
                "type": "dict",
                "properties": {
                    "points": {"type": "array", "items": {"type": "tuple"}, "description": "Points."},
                    "scale": {"type": "float", "description": "Scale."},
                    "options": {
                        "type": "dict",
                        "properties": {"unit": {"type": "string", "description": "Unit."}},
                        "description": "Options.",
                    },
                    "anything": {"type": "any", "description": "Any."},
                },
                "required": ["points"],
            },
        }
    ]
    (tool,) = tool_definitions(functions, "python")
    definition = tool["function"]
    assert tool["type"] == "function" and definition["name"] == "geo_distance"
    properties = definition["parameters"]["properties"]
    assert properties["points"] == {"type": "array", "items": {"type": "array"}, "description": "Points."}
    assert properties["scale"] == {
        "type": "number",
        "format": "float",
        "description": "Scale. This is a float type value.",
    }
    assert properties["options"]["type"] == "object" and properties["options"]["properties"]["unit"]["type"] == "string"
    assert properties["anything"]["type"] == "string"
    assert functions[0]["name"] == "geo.distance", "the task's docs must not be modified"


def test_task_items_are_light() -> None:
    task = tasks_for_env("bfcl/simple-v0")[0]
    assert str(task) == "simple_python_0" and task.split == "test"
    assert "question" not in repr(task)


def test_listing_imports_nothing_of_bfcl_eval() -> None:
    code = (
        "import sys; from rolloutgym.registry import get_registry; r = get_registry(); "
        "specs = [s for s in r.envs() if s.id.startswith('bfcl/')]; "
        "assert len(specs) == 17, len(specs); "
        "assert not [m for m in sys.modules if m.startswith('bfcl_eval') or m.startswith('rolloutgym_bfcl.envs')], "
        "'imported'; "
        "print(specs[0].description)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"source: bfcl-eval {package_version()}" in result.stdout


_HIDDEN = """
import importlib.metadata, importlib.util, sys
real_find_spec, real_version = importlib.util.find_spec, importlib.metadata.version
def find_spec(name, *args, **kwargs):
    return None if name.split('.')[0] == 'bfcl_eval' else real_find_spec(name, *args, **kwargs)
def version(name):
    if name == 'bfcl-eval':
        raise importlib.metadata.PackageNotFoundError(name)
    return real_version(name)
importlib.util.find_spec, importlib.metadata.version = find_spec, version
from rolloutgym.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_bfcl_eval_list_works_and_run_says_what_to_install(tmp_path: Any) -> None:
    """bfcl-eval hidden from the import system, as on a machine without it."""
    listed = subprocess.run(
        [sys.executable, "-c", _HIDDEN, "info", "bfcl/simple-v0"], capture_output=True, text=True, timeout=120
    )
    assert listed.returncode != 0
    assert "pip install bfcl-eval==2026.3.23" in " ".join((listed.stdout + listed.stderr).split())
    listing = subprocess.run(
        [sys.executable, "-c", _HIDDEN, "list", "bfcl"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "250", **__import__("os").environ},
    )
    assert listing.returncode == 0, listing.stderr
    assert "bfcl/simple-v0" in listing.stdout and "bfcl/multi-turn-base-v0" in listing.stdout
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            _HIDDEN,
            "run",
            "bfcl/simple-v0",
            "--policy",
            "oracle",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "run.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0
    message = " ".join((run.stdout + run.stderr).split())
    assert "'bfcl' extra of rolloutgym-bfcl" in message and "pip install bfcl-eval==2026.3.23" in message, message
    assert "Traceback" not in message


def test_missing_package_error_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    from rolloutgym_bfcl import _data

    monkeypatch.setattr(_data.importlib.util, "find_spec", lambda name, *args, **kwargs: None)
    with pytest.raises(ConfigError, match=r"'bfcl' extra of rolloutgym-bfcl \(pip install bfcl-eval=="):
        _data.data_dir()


def test_json_round_trip_of_tool_definitions() -> None:
    for category in CATEGORIES:
        task = tasks_for_env(category.env_id)[0]
        tools = tool_definitions(task.functions, category.language)
        assert json.loads(json.dumps(tools)) == tools
