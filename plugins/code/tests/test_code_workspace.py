"""The workspace tools: path validation, reads, edits and unified-diff patches (no sandbox needed)."""

from __future__ import annotations

import os

import pytest
from rolloutgym_code.tasks import reference_diff
from rolloutgym_code.workspace import Workspace, WorkspaceError


@pytest.fixture
def workspace():
    space = Workspace({"src/app.py": "def main():\n    return 1\n", "README.md": "hello\n"})
    yield space
    space.close()


@pytest.mark.parametrize(
    "path, message",
    [
        ("/etc/passwd", "absolute paths are not allowed"),
        ("../outside.txt", "'..' is not allowed"),
        ("src/../../outside.txt", "'..' is not allowed"),
        ("", "the path is empty"),
        (".", "names the workspace itself"),
    ],
)
def test_paths_leaving_the_workspace_are_refused(workspace, path, message):
    with pytest.raises(WorkspaceError, match=message):
        workspace.write_file(path, "x")
    with pytest.raises(WorkspaceError, match=message):
        workspace.read_file(path)


def test_symlinks_leaving_the_workspace_are_refused(workspace, tmp_path):
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink("/", workspace.root / "root")
    os.symlink(tmp_path, workspace.root / "src" / "escape")
    for path in ("root/etc/passwd", "src/escape/secret.txt"):
        with pytest.raises(WorkspaceError, match="leads outside the workspace"):
            workspace.read_file(path)
        with pytest.raises(WorkspaceError, match="leads outside the workspace"):
            workspace.write_file(path, "pwned")
    assert (tmp_path / "secret.txt").read_text() == "secret"
    assert workspace.list_files() == ["README.md", "src/app.py"]  # symlinks are not listed


def test_symlink_inside_the_workspace_is_fine(workspace):
    os.symlink("app.py", workspace.root / "src" / "alias.py")
    assert workspace.read_file("src/alias.py").startswith("def main")


def test_read_line_ranges(workspace):
    assert workspace.read_file("src/app.py", 2, 2) == "    return 1\n"
    assert workspace.read_file("src/app.py", start_line=2) == "    return 1\n"
    with pytest.raises(WorkspaceError, match="past the end"):
        workspace.read_file("src/app.py", 9, 10)
    with pytest.raises(WorkspaceError, match="invalid line range"):
        workspace.read_file("src/app.py", 3, 2)
    with pytest.raises(WorkspaceError, match="no file 'nope.py'"):
        workspace.read_file("nope.py")


def test_write_creates_directories_and_list_files(workspace):
    workspace.write_file("pkg/sub/mod.py", "x = 1\n")
    assert workspace.list_files() == ["README.md", "pkg/sub/mod.py", "src/app.py"]
    assert workspace.list_files("pkg") == ["pkg/sub/mod.py"]
    with pytest.raises(WorkspaceError, match="is a file"):
        workspace.write_file("README.md/inner.txt", "x")


def test_str_replace_needs_exactly_one_match(workspace):
    workspace.write_file("dup.py", "a = 1\na = 1\n")
    with pytest.raises(WorkspaceError, match="occurs 2 times"):
        workspace.str_replace("dup.py", "a = 1", "a = 2")
    with pytest.raises(WorkspaceError, match="was not found"):
        workspace.str_replace("dup.py", "b = 1", "b = 2")
    workspace.str_replace("src/app.py", "return 1", "return 2")
    assert workspace.read_file("src/app.py") == "def main():\n    return 2\n"


def test_delete_file_removes_empty_directories(workspace):
    workspace.delete_file("src/app.py")
    assert workspace.list_files() == ["README.md"]
    assert not (workspace.root / "src").exists()
    with pytest.raises(WorkspaceError, match="no file"):
        workspace.delete_file("src/app.py")


def test_apply_patch_changes_creates_and_deletes(workspace):
    before = workspace.text_files()
    after = {"src/app.py": "def main():\n    return 42\n", "src/new.py": "NEW = True\n", "README.md": None}
    changed = workspace.apply_patch(reference_diff(before, after))
    assert changed == ["README.md", "src/app.py", "src/new.py"]
    assert workspace.text_files() == {"src/app.py": "def main():\n    return 42\n", "src/new.py": "NEW = True\n"}


def test_apply_patch_tolerates_an_offset_and_git_headers(workspace):
    workspace.write_file("src/app.py", "# header\n# more\ndef main():\n    return 1\n")
    patch = (
        "diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n"
        "@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 3\n"
    )
    workspace.apply_patch(patch)
    assert workspace.read_file("src/app.py").endswith("    return 3\n")


def test_a_patch_that_does_not_apply_changes_nothing(workspace):
    before = workspace.text_files()
    good = reference_diff(before, {"README.md": "changed\n"})
    bad = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 999\n+    return 3\n"
    with pytest.raises(WorkspaceError, match="hunk 1 of src/app.py .* does not match"):
        workspace.apply_patch(good + bad)
    assert workspace.text_files() == before


@pytest.mark.parametrize(
    "patch, message",
    [
        ("", "the patch is empty"),
        ("just some text\n", "contains no file changes"),
        ("--- a/missing.py\n+++ b/missing.py\n@@ -1 +1 @@\n-a\n+b\n", "missing.py, which does not exist"),
        ("--- /dev/null\n+++ b/README.md\n@@ -0,0 +1 @@\n+x\n", "README.md, which already exists"),
        ("--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", "does not exist|'..' is not allowed"),
    ],
)
def test_malformed_patches_give_clear_errors(workspace, patch, message):
    with pytest.raises(WorkspaceError, match=message):
        workspace.apply_patch(patch)


def test_close_is_idempotent_and_removes_the_directory():
    space = Workspace({"a.txt": "a"})
    root = space.root
    space.close()
    space.close()
    assert not root.exists()
