"""The episode's workspace: a directory of text files that the agent's tools read and edit.

Every path is validated: absolute paths, ``..`` and symlinks that lead outside the
workspace are refused with a :class:`WorkspaceError` that says what to do instead. Code
never runs here: the sandbox gets a copy (:meth:`Workspace.snapshot`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ._patch import PatchError, apply_unified_diff
from ._paths import check_relative_path

__all__ = ["Workspace", "WorkspaceError"]

MAX_FILE_BYTES = 1 << 20
MAX_FILES = 500
READ_LIMIT_CHARS = 20_000


class WorkspaceError(ValueError):
    """A tool call the workspace refuses; the message is shown to the agent."""


class Workspace:
    """A temporary directory seeded with ``files``; removed by :meth:`close`.

    Args:
        files: initial files, relative POSIX path to text content.
    """

    def __init__(self, files: Mapping[str, str]) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="rolloutgym-code-"))
        self._real_root = os.path.realpath(self.root)
        try:
            for path, content in files.items():
                self.write_file(path, content)
        except BaseException:
            self.close()
            raise

    # -- paths --------------------------------------------------------------------------

    def resolve(self, path: str, *, must_exist: bool = False) -> Path:
        """The host path of workspace-relative ``path``; refuses paths that leave the workspace."""
        try:
            relative = check_relative_path(path)
        except ValueError as exc:
            raise WorkspaceError(str(exc)) from None
        target = self.root.joinpath(*relative.parts)
        real = os.path.realpath(target)
        if real != self._real_root and not real.startswith(self._real_root + os.sep):
            raise WorkspaceError(
                f"{path!r} leads outside the workspace (through a symlink); only files inside the workspace can be used"
            )
        if must_exist and not target.is_file():
            if target.is_dir():
                raise WorkspaceError(f"{path!r} is a directory, not a file; run list_files to see the files")
            raise WorkspaceError(f"no file {path!r} in the workspace; run list_files to see the files")
        return target

    def exists(self, path: str) -> bool:
        try:
            return self.resolve(path).is_file()
        except WorkspaceError:
            return False

    # -- tools --------------------------------------------------------------------------

    def list_files(self, path: str = ".") -> list[str]:
        """Sorted relative paths of every regular file under ``path`` (default: everything)."""
        base = self.root if path in ("", ".", "./") else self.resolve(path)
        if base.is_file():
            return [base.relative_to(self.root).as_posix()]
        if not base.is_dir():
            raise WorkspaceError(
                f"no directory {path!r} in the workspace; run list_files without a path to see everything"
            )
        found = []
        for directory, subdirectories, names in os.walk(base):
            subdirectories[:] = sorted(
                name for name in subdirectories if not os.path.islink(os.path.join(directory, name))
            )
            for name in names:
                full = Path(directory, name)
                if full.is_file() and not full.is_symlink():
                    found.append(full.relative_to(self.root).as_posix())
        return sorted(found)

    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        """The file's text, or lines ``start_line..end_line`` (1-based, inclusive)."""
        target = self.resolve(path, must_exist=True)
        text = target.read_text(encoding="utf-8", errors="replace")
        if start_line is None and end_line is None:
            if len(text) > READ_LIMIT_CHARS:
                lines = text.count("\n", 0, READ_LIMIT_CHARS) + 1
                return text[:READ_LIMIT_CHARS] + f"\n[... truncated; read the rest with start_line={lines}]"
            return text
        lines = text.splitlines(keepends=True)
        first = 1 if start_line is None else start_line
        last = len(lines) if end_line is None else end_line
        if first < 1 or last < first:
            raise WorkspaceError(
                f"invalid line range {first}..{last}; lines are numbered from 1 and end_line must be >= start_line"
            )
        if first > max(len(lines), 1):
            raise WorkspaceError(f"{path} has {len(lines)} lines; start_line {first} is past the end")
        return "".join(lines[first - 1 : last])[:READ_LIMIT_CHARS]

    def write_file(self, path: str, content: str) -> int:
        """Create or overwrite ``path``; returns the number of bytes written."""
        if not isinstance(content, str):
            raise WorkspaceError("content must be a string")
        data = content.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise WorkspaceError(f"the content is {len(data)} bytes; files are limited to {MAX_FILE_BYTES} bytes")
        target = self.resolve(path)
        if target.is_dir():
            raise WorkspaceError(f"{path!r} is a directory; choose a file name")
        if not target.exists() and len(self.list_files()) >= MAX_FILES:
            raise WorkspaceError(f"the workspace already holds {MAX_FILES} files; delete some first")
        for parent in reversed(target.relative_to(self.root).parents):
            if (self.root / parent).is_file():
                raise WorkspaceError(f"cannot create {path!r}: {parent.as_posix()!r} is a file")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return len(data)

    def str_replace(self, path: str, old: str, new: str) -> None:
        """Replace the only occurrence of ``old`` in ``path`` with ``new``."""
        target = self.resolve(path, must_exist=True)
        if not isinstance(old, str) or not old:
            raise WorkspaceError("old_str must be a non-empty string copied exactly from the file")
        if not isinstance(new, str):
            raise WorkspaceError("new_str must be a string")
        text = target.read_text(encoding="utf-8", errors="replace")
        count = text.count(old)
        if count == 0:
            raise WorkspaceError(
                f"old_str was not found in {path}; read the file and copy the text exactly (whitespace included)"
            )
        if count > 1:
            raise WorkspaceError(
                f"old_str occurs {count} times in {path}; include more surrounding lines so it is unique"
            )
        self.write_file(path, text.replace(old, new, 1))

    def apply_patch(self, patch: str) -> list[str]:
        """Apply a unified diff to the workspace (all or nothing); returns the changed paths."""
        current = {path: self.resolve(path).read_text(encoding="utf-8", errors="replace") for path in self.list_files()}
        try:
            changes = apply_unified_diff(patch, current)
        except PatchError as exc:
            raise WorkspaceError(str(exc)) from None
        for path in changes:
            self.resolve(path)  # validate every path before touching anything
        for path, content in changes.items():
            if content is None:
                self.delete_file(path)
            else:
                self.write_file(path, content)
        return sorted(changes)

    def delete_file(self, path: str) -> None:
        """Delete one file (directories left empty are removed too)."""
        target = self.resolve(path, must_exist=True)
        target.unlink()
        parent = target.parent
        while parent != self.root and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent

    # -- state --------------------------------------------------------------------------

    def text_files(self) -> dict[str, str]:
        """Every file's text, by relative path."""
        return {path: self.resolve(path).read_text(encoding="utf-8", errors="replace") for path in self.list_files()}

    def snapshot(self) -> dict[str, bytes]:
        """Every file's bytes, by relative path (what the sandbox gets)."""
        return {path: self.resolve(path).read_bytes() for path in self.list_files()}

    def close(self) -> None:
        """Delete the directory (idempotent)."""
        if self.root.exists():
            shutil.rmtree(self.root, ignore_errors=True)
