"""Workspace paths: the rule every workspace-relative path passes, and the read of a file a
run left behind that follows no link and reads nothing but a regular file (bounded)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import PurePosixPath

__all__ = ["check_relative_path", "read_regular_file"]

_MAX_COLLECT_BYTES = 8 << 20
_MAX_PATH_CHARS = 1024
_MAX_PATH_DEPTH = 32


def check_relative_path(path: str) -> PurePosixPath:
    """Validate a workspace-relative POSIX path; raise ``ValueError`` naming the problem."""
    if not isinstance(path, str) or not path.strip():
        raise ValueError("the path is empty; give a path relative to the workspace, e.g. 'src/app.py'")
    if "\x00" in path:
        raise ValueError(f"the path {path!r} contains a NUL byte")
    pure = PurePosixPath(path)
    if pure.is_absolute():
        raise ValueError(f"absolute paths are not allowed ({path!r}); give a path relative to the workspace")
    if ".." in pure.parts:
        raise ValueError(f"'..' is not allowed in paths ({path!r}); paths must stay inside the workspace")
    parts = [part for part in pure.parts if part != "."]
    if not parts:
        raise ValueError(f"{path!r} names the workspace itself, not a file")
    if (
        len(path) > _MAX_PATH_CHARS
        or len(parts) > _MAX_PATH_DEPTH
        or any(len(part.encode("utf-8", "surrogatepass")) > 255 for part in parts)
    ):
        raise ValueError(
            f"the path {path[:80]!r}... is too long (at most {_MAX_PATH_CHARS} characters, {_MAX_PATH_DEPTH} "
            "folders deep, 255 bytes per name)"
        )
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"the path {path!r} is not valid UTF-8 text (it holds a lone surrogate)") from None
    return PurePosixPath(*parts)


def read_regular_file(work: str, name: str) -> bytes | None:
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"collect names top-level files only, got {name!r}")
    directory = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EACCES):
                return None
            raise
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None
            with os.fdopen(descriptor, "rb", closefd=False) as handle:
                return handle.read(_MAX_COLLECT_BYTES)
        finally:
            os.close(descriptor)
    finally:
        os.close(directory)
