"""Run files: a JSONL header line, then one line per finished ``TrajectoryGroup``.

Lines are appended and flushed as groups finish, so a killed run loses only the groups
in flight; ``RunWriter(..., resume=True)`` continues a file, skipping finished tasks. The
writer keeps only a few numbers per finished group (:class:`GroupFacts`), not the groups:
a run's memory does not grow with its length. A write that fails (full disk, no permission)
raises :class:`OutputError`: one line with the path, the reason, what is safe and the fix.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rolloutgym_protocol import TrajectoryGroup, to_jsonable
from rolloutgym_protocol.errors import RunFileError, json_error_text, output_error

from ._schema import FORMAT_VERSION, HeaderLine
from ._schema import GroupLineSchema as _GroupSchema
from .stats import GroupFacts, SummaryBuilder, group_facts, line_facts

__all__ = [
    "FORMAT_VERSION",
    "FactsLine",
    "GroupLine",
    "Run",
    "RunWriter",
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


def _parse_line(path: Path, number: int, text: str) -> dict[str, Any]:
    try:
        data = _fast_loads(text)
    except _FastError:  # orjson refuses what json reads (integers over 64 bits, NaN, lone surrogates): ask json
        data = _slow_parse(path, number, text)
    if not isinstance(data, dict):
        raise RunFileError(f"{path}:{number}: expected a JSON object, got {type(data).__name__}")
    return data


def _slow_parse(path: Path, number: int, text: str) -> Any:
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
    with path.open(encoding="utf-8") as handle:
        first = handle.readline()
    if not first.strip():
        raise RunFileError(f"{path}: empty run file (no header line)")
    return _validate_header(path, _parse_line(path, 1, first))


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


def _group_dicts(path: Path, allow_partial_tail: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, parsed JSON)`` of each group line, after the header is validated."""
    read_header(path)
    with path.open(encoding="utf-8") as handle:
        handle.readline()
        for number, text in enumerate(handle, start=2):
            if text.isspace():  # a blank line (strip() would copy a long line to say no)
                continue
            if allow_partial_tail and not text.endswith("\n"):
                try:
                    json.loads(text)
                except json.JSONDecodeError:
                    return
            data = _parse_line(path, number, text)
            if data.get("kind") != "group":
                raise RunFileError(f"{path}:{number}: unknown line kind {data.get('kind')!r}; expected 'group'")
            yield number, data


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
        task_index = data.get("task_index")
        facts = line_facts(data) if type(task_index) is int else None
        if facts is not None:
            yield FactsLine(task_index, facts, data, number)  # type: ignore[arg-type]
            continue
        task_index, group = _validate_group(path, number, data)
        yield FactsLine(task_index, group_facts(group), data, number, group)


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
    reward each), not with the file: one line is held at a time.
    """
    path = Path(path)
    header = read_header(path)
    builder = SummaryBuilder(header)
    done: set[int] = set()
    errors: list[tuple[str, dict[str, Any]]] = []
    for line in iter_group_facts(path, allow_partial_tail=allow_partial_tail):
        builder.add(line.task_index, line.facts)
        done.add(line.task_index)
        if line.facts.errors:
            errors.extend((line.facts.item_id, error) for error in line.data.get("errors", ()))
    return StreamedRun(path, header, builder.summary(), done, errors)


# Header fields that must match for --resume to continue a file.
RESUME_KEYS = ("policy", "num_rollouts", "seed", "tasks")


class RunWriter:
    """Appends groups to a run file, one flushed line each.

    Args:
        path: the run file.
        header: the header dict (written when the file is new).
        resume: continue an existing file: the header must agree on env, policy,
            rollouts, seed and tasks; a line cut off by a kill is removed.
        retry_errors: with ``resume``, a group whose members all failed (e.g. the model
            server was down) is not done: its line is removed and its task runs again
            (``retried`` lists those task indices).

    ``facts`` holds the :class:`GroupFacts` of every finished group (resumed or written), by
    task index; the groups themselves are only in the file (:meth:`read_groups`).

    Raises:
        OutputError: the file cannot be created or written (the message names the path and the fix).
    """

    def __init__(
        self, path: str | Path, header: dict[str, Any], *, resume: bool = False, retry_errors: bool = True
    ) -> None:
        self.path = Path(path)
        self.header = header
        self.done: set[int] = set()
        self.facts: dict[int, GroupFacts] = {}
        self.retried: list[int] = []
        self._handle: Any = None
        if resume and self.path.exists() and self.path.stat().st_size > 0:
            existing = read_header(self.path)
            self._check_resumable(existing)
            self.header = existing
            for task_index, group in iter_run(self.path, allow_partial_tail=True):
                if retry_errors and group.errors and not group.trajectories:
                    self.retried.append(task_index)
                    continue
                self.done.add(task_index)
                self.facts[task_index] = group_facts(group)
            with self._guard():
                self._truncate_partial_tail()
                if self.retried:
                    self._drop_lines(set(self.retried))
                self._handle = self.path.open("a", encoding="utf-8")
        else:
            if self.path.exists() and self.path.stat().st_size > 0 and not resume:
                raise RunFileError(
                    f"run file '{self.path}' already exists; continue it with --resume (resume=True from Python) "
                    "or choose another --out (out=...)"
                )
            with self._guard():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = self.path.open("w", encoding="utf-8")
                self._write(header)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn an ``OSError`` of the file into an :class:`OutputError` that says what is safe and the fix."""
        try:
            yield
        except OSError as exc:
            if self._handle is not None:
                self._abandon_handle()
            done = ""
            if self.done:
                done = (
                    f"the {len(self.done)} finished task(s) before it are in the file; once it can be written, "
                    f"continue with --out {self.path} --resume"
                )
            raise output_error(self.path, exc, what="the run file", done=done) from None

    def _abandon_handle(self) -> None:
        """Close a handle whose buffered line cannot be written (--resume cuts a torn last line)."""
        handle, self._handle = self._handle, None
        try:
            handle.close()
        except OSError:
            pass

    def _check_resumable(self, existing: dict[str, Any]) -> None:
        if existing["env"]["id"] != self.header["env"]["id"]:
            raise RunFileError(
                f"cannot resume {self.path}: it is a run of '{existing['env']['id']}', not '{self.header['env']['id']}'"
            )
        for key in RESUME_KEYS:
            if existing.get(key) != self.header.get(key):
                raise RunFileError(
                    f"cannot resume {self.path}: its {key} is {existing.get(key)!r:.80} but this run asks for "
                    f"{self.header.get(key)!r:.80}; use the same options or a new --out"
                )

    def _drop_lines(self, task_indices: set[int]) -> None:
        """Rewrite the file without the group lines of ``task_indices`` (atomically)."""
        temporary = self.path.with_name(self.path.name + ".resume-tmp")
        with self.path.open(encoding="utf-8") as source, temporary.open("w", encoding="utf-8") as target:
            target.write(source.readline())  # the header, byte for byte
            for text in source:
                if text.strip() and json.loads(text).get("task_index") in task_indices:
                    continue
                target.write(text)
            target.flush()
            os.fsync(target.fileno())
        os.replace(temporary, self.path)

    def _truncate_partial_tail(self) -> None:
        with self.path.open("rb+") as handle:
            data = handle.read()
            if data and not data.endswith(b"\n"):
                cut = data.rfind(b"\n") + 1
                handle.truncate(cut)

    def _write(self, data: dict[str, Any]) -> None:
        try:  # group lines are strict JSON already (to_dict); so is a header read from a run file
            text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (ValueError, TypeError, RecursionError):  # a header from Python: 10**5000, NaN, objects in options
            text = json.dumps(to_jsonable(data), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        self._handle.write(text + "\n")
        self._handle.flush()

    def write_group(self, task_index: int, group: TrajectoryGroup) -> None:
        """Append one finished group and flush it to disk (only its :class:`GroupFacts` stay in memory)."""
        if self._handle is None:
            raise RunFileError(f"the run file {self.path} is closed (a write to it failed)")
        with self._guard():
            self._write({"kind": "group", "task_index": task_index, **group.to_dict()})
        self.done.add(task_index)
        self.facts[task_index] = group_facts(group)

    def read_groups(self) -> dict[int, TrajectoryGroup]:
        """The groups in the file by task index (read back: the writer does not hold them)."""
        return dict(iter_run(self.path, allow_partial_tail=True))

    def close(self) -> None:
        if self._handle is None or self._handle.closed:
            return
        with self._guard():
            self._handle.flush()
            if self.path.is_file():  # fsync of a device (/dev/null) or pipe is refused
                os.fsync(self._handle.fileno())
            self._handle.close()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
