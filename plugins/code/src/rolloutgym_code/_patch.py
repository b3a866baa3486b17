"""Applying a unified diff to in-memory files (parsed with ``unidiff``).

All or nothing: either every hunk of every file applies, or nothing changes and the error
names the file and hunk that did not match. A hunk may apply a few lines away from the
line numbers in its header (like ``patch``'s offset), but its context must match exactly
(trailing whitespace aside).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["PatchError", "apply_unified_diff"]

_MAX_OFFSET = 200


class PatchError(ValueError):
    """The patch is malformed or does not apply; the message says where."""


def _strip_prefix(path: str | None) -> str | None:
    if path is None or path == "/dev/null":
        return None
    for prefix in ("a/", "b/"):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _same(left: str, right: str) -> bool:
    return left.rstrip() == right.rstrip()


def _apply_hunks(path: str, original: str, patched_file: object) -> str:
    lines = _lines(original)
    output: list[str] = []
    position = 0
    for number, hunk in enumerate(patched_file, start=1):  # type: ignore[attr-defined]
        source = [line.value for line in hunk if line.is_context or line.is_removed]
        target = [line.value for line in hunk if line.is_context or line.is_added]
        expected_start = max(hunk.source_start - 1, 0) if hunk.source_length else hunk.source_start
        start = _find(lines, source, expected_start, position)
        if start is None:
            first = source[0].rstrip("\n") if source else ""
            raise PatchError(
                f"hunk {number} of {path} (@@ -{hunk.source_start},{hunk.source_length} @@) does not match the file"
                + (f"; its first context line {first!r} was not found" if first else "")
                + ". Read the file again and regenerate the diff, or use str_replace"
            )
        output += lines[position:start]
        if target and not target[-1].endswith("\n") and start + len(source) < len(lines):
            target[-1] += "\n"
        output += target
        position = start + len(source)
    output += lines[position:]
    return "".join(output)


def _find(lines: list[str], source: list[str], expected: int, earliest: int) -> int | None:
    if not source:
        return min(max(expected, earliest), len(lines))
    for offset in range(_MAX_OFFSET + 1):
        for candidate in {expected + offset, expected - offset}:
            if candidate < earliest or candidate + len(source) > len(lines):
                continue
            if all(_same(lines[candidate + index], source[index]) for index in range(len(source))):
                return candidate
    return None


def apply_unified_diff(diff: str, files: Mapping[str, str]) -> dict[str, str | None]:
    """Return the changed files (path to new content, ``None`` for a deleted file).

    Args:
        diff: a unified diff (``git diff`` or ``diff -u`` output; ``a/``/``b/`` prefixes ok).
        files: the current files, path to content.

    Raises:
        PatchError: the diff cannot be parsed, names a missing file, creates an existing
            one, or a hunk does not match.
    """
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    if not isinstance(diff, str) or not diff.strip():
        raise PatchError("the patch is empty; give a unified diff with '--- a/PATH', '+++ b/PATH' and '@@' hunks")
    text = diff if diff.endswith("\n") else diff + "\n"
    try:
        patch_set = PatchSet(text)
    except UnidiffParseError as exc:
        raise PatchError(f"the patch is not a valid unified diff: {exc}") from None
    if not len(patch_set):
        raise PatchError(
            "the patch contains no file changes; each file needs '--- a/PATH' and '+++ b/PATH' lines followed by "
            "'@@' hunks"
        )
    changed: dict[str, str | None] = {}
    current = dict(files)
    for patched_file in patch_set:
        source = _strip_prefix(patched_file.source_file)
        target = _strip_prefix(patched_file.target_file)
        if source is None and target is None:
            raise PatchError("a file section has /dev/null on both sides")
        if source is None:
            assert target is not None
            if current.get(target) is not None:
                raise PatchError(
                    f"the patch creates {target}, which already exists; diff against its current content instead"
                )
            content = _apply_hunks(target, "", patched_file)
            changed[target] = current[target] = content
            continue
        if current.get(source) is None:
            raise PatchError(f"the patch changes {source}, which does not exist; run list_files to see the workspace")
        if target is None:
            changed[source] = current[source] = None
            continue
        content = _apply_hunks(source, current[source] or "", patched_file)
        if target != source:
            changed[source] = current[source] = None
        changed[target] = current[target] = content
    return changed
