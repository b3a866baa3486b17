"""Reading run files: a JSONL header line, then one line per finished ``TrajectoryGroup``.

One reader (:func:`iter_group_lines`) validates every line; :func:`iter_group_facts` and
:func:`summarize_run` stream a file into its summary without building the groups. Writing
(and ``--resume``) is in :mod:`rolloutgym.runs._writer`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rolloutgym_protocol import TrajectoryGroup
from rolloutgym_protocol.errors import RunFileError, json_error_text

from ._partial import partial_facts
from ._schema import FORMAT_VERSION, HeaderLine
from ._schema import GroupLineSchema as _GroupSchema
from .stats import GroupFacts, SummaryBuilder, group_facts, line_facts

__all__ = [
    "FORMAT_VERSION",
    "FactsLine",
    "GroupLine",
    "Run",
    "StreamedRun",
    "iter_group_facts",
    "iter_group_lines",
    "iter_run",
    "read_header",
    "read_run",
    "summarize_run",
]


@dataclass
class Run:
    """A parsed run file: its header dict and its groups (with their task indices)."""

    path: Path
    header: dict[str, Any]
    groups: list[TrajectoryGroup] = field(default_factory=list)
    task_indices: list[int] = field(default_factory=list)

    @property
    def env_id(self) -> str:
        return self.header["env"]["id"]

    @property
    def complete(self) -> bool:
        """Every task of the header has a group."""
        return len(set(self.task_indices)) >= len(self.header.get("task_indices", ()))


def _format_location(error: ValidationError) -> str:
    first = error.errors()[0]
    location = ""
    for part in first["loc"]:
        location += f"[{part}]" if isinstance(part, int) else (f".{part}" if location else str(part))
    return f"field '{location}': {first['msg']}"


try:  # parses run-file lines 2-3x faster than json where installed (a line it refuses goes to json)
    from orjson import JSONDecodeError as _FastError
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is optional
    _fast_loads, _FastError = json.loads, json.JSONDecodeError


def _parse_line(path: Path, number: int, text: str | bytes) -> dict[str, Any]:
    try:
        data = _fast_loads(text)
    except _FastError:  # orjson refuses what json reads (integers over 64 bits, NaN, lone surrogates): ask json
        data = _slow_parse(path, number, text)
    if not isinstance(data, dict):
        raise RunFileError(f"{path}:{number}: expected a JSON object, got {type(data).__name__}")
    return data


def _slow_parse(path: Path, number: int, text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RunFileError(
            f"{path}:{number}: not valid JSON ({json_error_text(exc)}); the run file is corrupt"
        ) from None


def _validate_header(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    if data.get("kind") != "header":
        raise RunFileError(
            f"{path}:1: the first line must be the run header (kind 'header'); is this a rolloutgym run file?"
        )
    try:
        HeaderLine.model_validate(data)
    except ValidationError as exc:
        raise RunFileError(f"{path}:1: invalid run header, {_format_location(exc)}") from None
    if data["format_version"] > FORMAT_VERSION:
        raise RunFileError(
            f"{path}: run file format {data['format_version']} is newer than this rolloutgym supports "
            f"({FORMAT_VERSION}); upgrade rolloutgym"
        )
    return data


def _validate_group(path: Path, number: int, data: dict[str, Any]) -> tuple[int, TrajectoryGroup]:
    try:
        _GroupSchema.model_validate(data)
    except ValidationError as exc:
        raise RunFileError(f"{path}:{number}: invalid group line, {_format_location(exc)}") from None
    try:
        group = TrajectoryGroup.from_dict(data)
    except (ValueError, TypeError, KeyError) as exc:
        raise RunFileError(f"{path}:{number}: invalid group line: {exc}") from None
    return data["task_index"], group


def read_header(path: str | Path) -> dict[str, Any]:
    """Read and validate only the header line."""
    path = Path(path)
    if not path.exists():
        raise RunFileError(f"run file '{path}' does not exist")
    with path.open("rb") as handle:
        first = handle.readline()
    if not first.strip():
        raise RunFileError(f"{path}: empty run file (no header line)")
    _check_utf8(path, 1, first)
    return _validate_header(path, _parse_line(path, 1, first))


def _check_utf8(path: Path, number: int, text: bytes) -> None:
    if text.isascii():
        return
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunFileError(
            f"{path}:{number}: not valid UTF-8 (byte {exc.start + 1} of the line); the run file is corrupt"
        ) from None


@dataclass(frozen=True)
class GroupLine:
    """One group line of a run file: its task index, the group, and the line's parsed JSON.

    ``data`` is the dict as read (readers that only re-serialise a group, like the report's
    trajectory viewer, use it instead of ``group.to_dict()``).
    """

    task_index: int
    group: TrajectoryGroup
    data: dict[str, Any]
    number: int


# Lines of token-level runs are about 100 KB: reading in larger pieces halves the cost of splitting them.
_READ_BUFFER = 1 << 18


def _group_texts(path: Path, allow_partial_tail: bool) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` of each group line (UTF-8 checked), after the header is validated."""
    read_header(path)
    with path.open("rb", buffering=_READ_BUFFER) as handle:
        handle.readline()
        for number, text in enumerate(handle, start=2):
            if text.isspace():  # a blank line (strip() would copy a long line to say no)
                continue
            if allow_partial_tail and not text.endswith(b"\n"):
                try:
                    json.loads(text)
                except (json.JSONDecodeError, UnicodeDecodeError):  # cut mid-write, maybe inside a character
                    return
            _check_utf8(path, number, text)
            yield number, text


def _group_dict(path: Path, number: int, text: bytes) -> dict[str, Any]:
    data = _parse_line(path, number, text)
    if data.get("kind") != "group":
        raise RunFileError(f"{path}:{number}: unknown line kind {data.get('kind')!r}; expected 'group'")
    return data


def _group_dicts(path: Path, allow_partial_tail: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, parsed JSON)`` of each group line, after the header is validated."""
    for number, text in _group_texts(path, allow_partial_tail):
        yield number, _group_dict(path, number, text)


@dataclass(frozen=True)
class FactsLine:
    """One group line read for a summary: its task index, :class:`GroupFacts` and parsed JSON.

    ``group`` is the validated group when the line took the full reader (see
    :func:`~rolloutgym.runs.stats.line_facts`), else ``None``.
    """

    task_index: int
    facts: GroupFacts
    data: dict[str, Any]
    number: int
    group: TrajectoryGroup | None = None


def iter_group_facts(path: str | Path, *, allow_partial_tail: bool = False) -> Iterator[FactsLine]:
    """Stream each group line's :class:`GroupFacts` without building the groups (``show``, ``report``).

    A line is read straight from its JSON (:func:`~rolloutgym.runs.stats.line_facts`): the
    fields the summary reads and the kind of every other field are checked; a line that fails
    a check, or has tagged values, goes through the full validation of :func:`iter_group_lines`
    (same errors, with the line number). Several times faster than building every group.
    """
    path = Path(path)
    for number, data in _group_dicts(path, allow_partial_tail):
        yield _facts_line(path, number, data)


def _facts_line(path: Path, number: int, data: dict[str, Any]) -> FactsLine:
    task_index = data.get("task_index")
    facts = line_facts(data) if type(task_index) is int else None
    if facts is not None:
        return FactsLine(task_index, facts, data, number)  # type: ignore[arg-type]
    task_index, group = _validate_group(path, number, data)
    return FactsLine(task_index, group_facts(group), data, number, group)


def iter_group_lines(path: str | Path, *, allow_partial_tail: bool = False) -> Iterator[GroupLine]:
    """The one run-file reader: validate the header, then stream and validate each group line.

    Used by ``show``, ``report``, ``rescore``, ``export`` and ``--resume``.

    Args:
        allow_partial_tail: ignore a last line cut off mid-write (a killed run).

    Raises:
        RunFileError: a missing file, a bad header, a corrupt or unknown line (with its line number).
    """
    path = Path(path)
    for number, data in _group_dicts(path, allow_partial_tail):
        task_index, group = _validate_group(path, number, data)
        yield GroupLine(task_index, group, data, number)


def iter_run(path: str | Path, *, allow_partial_tail: bool = False) -> Iterator[tuple[int, TrajectoryGroup]]:
    """Stream ``(task_index, group)`` pairs (see :func:`iter_group_lines`)."""
    for line in iter_group_lines(path, allow_partial_tail=allow_partial_tail):
        yield line.task_index, line.group


def read_run(path: str | Path, *, allow_partial_tail: bool = False) -> Run:
    """Read and validate a whole run file."""
    path = Path(path)
    run = Run(path, read_header(path))
    for task_index, group in iter_run(path, allow_partial_tail=allow_partial_tail):
        run.groups.append(group)
        run.task_indices.append(task_index)
    return run


@dataclass
class StreamedRun:
    """What :func:`summarize_run` read: the header, the summary and the failed members' lines."""

    path: Path
    header: dict[str, Any]
    summary: Any  # RunSummary
    task_indices: set[int]
    errors: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (item id, error as in the file)

    @property
    def complete(self) -> bool:
        """Every task of the header has a group."""
        return len(self.task_indices) >= len(self.header.get("task_indices", ()))

    @property
    def num_missing(self) -> int:
        return len(self.header.get("task_indices", ())) - len(self.task_indices)


def summarize_run(path: str | Path, *, allow_partial_tail: bool = False) -> StreamedRun:
    """Stream a run file into its summary (``rolloutgym show``): equal to ``summarize`` of :func:`read_run`.

    Memory grows with the number of tasks (one :class:`TaskSummary` each) and trajectories (a
    reward each), not with the file: one line is held at a time. Each line is first decoded for
    only the fields a summary reads (:func:`~rolloutgym.runs._partial.partial_facts`: token ids,
    logprobs and messages are skipped unparsed); a line it is unsure of is read in full.
    """
    path = Path(path)
    header = read_header(path)
    builder = SummaryBuilder(header)
    done: set[int] = set()
    errors: list[tuple[str, dict[str, Any]]] = []
    for number, text in _group_texts(path, allow_partial_tail):
        partial = partial_facts(text)  # only the numbers a summary reads; None: read the whole line
        if partial is None:
            line = _facts_line(path, number, _group_dict(path, number, text))
            task_index, facts, failed = line.task_index, line.facts, line.data.get("errors", ())
        else:
            task_index, facts, failed = partial.task_index, partial.facts, partial.errors
        builder.add(task_index, facts)
        done.add(task_index)
        if facts.errors:
            errors.extend((facts.item_id, error) for error in failed)
    return StreamedRun(path, header, builder.summary(), done, errors)
