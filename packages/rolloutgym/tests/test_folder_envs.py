"""A folder is an env of the template whose ``TemplateSpec.folder_marker`` it holds (sources.py, the one door).

The core names no template: a third party's template here claims folders holding ``notes.txt``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rolloutgym.registry import Registry
from rolloutgym.sources import is_env_file, resolve_env
from rolloutgym_protocol import TemplateSpec, hookimpl
from rolloutgym_protocol.errors import EnvFileError, SpecError

NOTES_TEMPLATE = """
from pathlib import Path
from rolloutgym.declarative import Environment, Task

class NoteEnv:
    def __init__(self, text):
        self.text = text

def load(path):
    marked = sorted(p for p in path.iterdir() if (p / "notes.txt").is_file())
    folders = [path] if (path / "notes.txt").is_file() else marked
    tasks = [Task(instruction=(f / "notes.txt").read_text(), id=f.name) for f in folders]
    return Environment(slug=path.name, name="notes", template="notes", config={}, tasks=tasks)

def compile_notes(environment):
    return lambda task, **kwargs: NoteEnv(task.instruction)
"""


class NotesPlugin:
    @hookimpl
    def rolloutgym_templates(self):
        return [
            TemplateSpec(
                "notes",
                "notes_template_for_tests:compile_notes",
                folder_marker="notes.txt",
                folder_loader="notes_template_for_tests:load",
            )
        ]


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    (tmp_path / "notes_template_for_tests.py").write_text(NOTES_TEMPLATE)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry(load_entry_points=False)
    registry.register(NotesPlugin(), name="notes-test")
    return registry


def test_a_folder_of_task_folders_resolves_through_the_template(tmp_path: Path, registry: Registry) -> None:
    for name, text in (("b", "second"), ("a", "first")):
        (tmp_path / "set" / name).mkdir(parents=True)
        (tmp_path / "set" / name / "notes.txt").write_text(text)
    assert is_env_file(str(tmp_path / "set"))
    resolved = resolve_env(str(tmp_path / "set"), registry)
    assert (resolved.env_id, resolved.origin, resolved.task_ids) == (
        "file/set-v0",
        f"file:{tmp_path / 'set'}",
        ["a", "b"],
    )
    assert resolved.make_task(1).text == "second"
    assert resolve_env(str(tmp_path / "set" / "a"), registry).task_ids == ["a"]


def test_a_folder_no_template_claims_is_a_one_line_error(tmp_path: Path, registry: Registry) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(EnvFileError) as caught:
        resolve_env(str(tmp_path / "empty"), registry)
    assert "no installed template reads" in str(caught.value) and "notes.txt (notes)" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_folder_marker_and_loader_come_together() -> None:
    with pytest.raises(SpecError, match="folder_marker and folder_loader together"):
        TemplateSpec("x", "m:compile", folder_marker="x.toml")
    with pytest.raises(SpecError, match="entry point"):
        TemplateSpec("x", "m:compile", folder_marker="x.toml", folder_loader="not an entry point")
