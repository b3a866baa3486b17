"""Writing run files: :class:`RunWriter` appends one flushed line per finished group.

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
from pathlib import Path
from typing import Any

from rolloutgym_protocol import TrajectoryGroup, to_jsonable
from rolloutgym_protocol.errors import RunFileError, output_error

from ._store import iter_run, read_header
from .stats import GroupFacts, group_facts

__all__ = ["RESUME_KEYS", "RunWriter"]


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
