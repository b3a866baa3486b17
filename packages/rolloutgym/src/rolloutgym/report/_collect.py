"""One streaming pass over a run file: the summary, a compact index and one compressed blob per group.

Memory stays bounded by the index (a few numbers per trajectory): each group is read with
the run-file reader (:func:`rolloutgym.runs.iter_group_lines`), reduced to what
:func:`rolloutgym.runs.summarize` looks at (:func:`rolloutgym.runs.group_facts`), and handed
to a compression thread that writes its blob for the trajectory viewer; at most a few
groups' text is held at a time. A run killed mid-write may end in a cut line; it is
skipped, and the finished groups are reported.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from array import array
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rolloutgym_protocol import TrajectoryGroup

from ..runs import RunSummary, SummaryBuilder, iter_group_facts, read_header

__all__ = ["RunDigest", "collect_run", "compress_blob", "group_blob"]

try:
    from orjson import dumps as _fast_dumps
except ImportError:  # pragma: no cover - orjson is optional
    _fast_dumps = None

# Error messages in the index are cut; the blob keeps the whole message and traceback.
_INDEX_MESSAGE_CHARS = 300
# Level 1 compresses about 1.5x faster than level 3 (and 3.5x than zlib's default 6) for ~7% (~17%) more bytes:
# compression is the largest part of a report's time.
_COMPRESSION_LEVEL = 1
# Groups whose compression (which releases the GIL) may run while the next line is parsed.
_IN_FLIGHT = 4
LOGPROB_DECIMALS = 4


@dataclass
class RunDigest:
    """What the report needs from one run file, gathered in one streaming pass.

    Attributes:
        path: the run file.
        header: its header line.
        summary: the :class:`RunSummary` (the same numbers as ``rolloutgym show``).
        tasks: one index entry per group: the task's numbers and its members.
        errors: every failed member (message cut to a few hundred characters).
        rewards: every trajectory's score value, for the histogram.
        blob_ids: the element id of each group's compressed blob, in group order.
        blob_bytes: total size of the blobs as written.
        raw_bytes: total size of the groups' JSON before compression.
    """

    path: Path
    header: dict[str, Any]
    summary: RunSummary
    tasks: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    blob_ids: list[str] = field(default_factory=list)
    blob_bytes: int = 0
    raw_bytes: int = 0

    @property
    def complete(self) -> bool:
        """Every task named in the header has a group."""
        wanted = set(self.header.get("task_indices", ()))
        return wanted <= {task["task_index"] for task in self.tasks}

    @property
    def num_missing(self) -> int:
        wanted = set(self.header.get("task_indices", ()))
        return len(wanted - {task["task_index"] for task in self.tasks})


def _rounded(values: list[float]) -> list[float]:
    # numpy comes with matplotlib (the report extra) and rounds a long list ~20x faster.
    import numpy

    try:
        return numpy.round(numpy.asarray(values, dtype=float), LOGPROB_DECIMALS).tolist()  # type: ignore[no-any-return]
    except (TypeError, ValueError):  # a tagged value ({"$float": "-inf"}) among them: kept as it is
        return [round(value, LOGPROB_DECIMALS) if type(value) is float else value for value in values]


def group_blob(data: dict[str, Any]) -> bytes:
    """The group's JSON for the viewer, from its run-file line (``data`` is modified).

    Left out, since the viewer does not show them: each step's ``observation`` (it repeats
    the previous step's ``next_observation`` or the ``initial_observation``),
    ``observation_tokens`` (prompt tokens; their count is in the summary) and the tool list
    a token-level policy copies into ``policy_info``. Logprobs are rounded to
    ``LOGPROB_DECIMALS`` places (the viewer shows three).
    """
    data.pop("kind", None)
    data.pop("task_index", None)
    rounding: list[dict[str, Any]] = []  # the steps with logprobs: rounded in one call for the group
    for trajectory in data.get("trajectories", ()):
        for step in trajectory.get("steps", ()):
            step.pop("observation", None)
            step.pop("observation_tokens", None)
            if isinstance(step.get("policy_info"), dict):
                step["policy_info"].pop("tools", None)
            if step.get("policy_logprobs"):
                rounding.append(step)
    if rounding:
        rounded = _rounded([value for step in rounding for value in step["policy_logprobs"]])
        start = 0
        for step in rounding:
            end = start + len(step["policy_logprobs"])
            step["policy_logprobs"] = rounded[start:end]
            start = end
    if _fast_dumps is not None:
        try:  # the same JSON value, 5-10x faster (a non-finite float becomes null, as _finite does)
            return _fast_dumps(data)  # type: ignore[no-any-return]
        except TypeError:  # orjson refuses integers over 64 bits and lone surrogates: json writes them
            pass
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or infinity somewhere in free-form info: JSON (and JSON.parse) has none
        text = json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8")


def compress_blob(text: bytes) -> str:
    """zlib-compress and base64-encode a blob (the browser's ``DecompressionStream("deflate")`` reads it)."""
    return base64.b64encode(zlib.compress(text, _COMPRESSION_LEVEL)).decode("ascii")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def _member_rows(group: TrajectoryGroup, threshold: float) -> list[list[Any]]:
    """``[member, score, passed, turns, stop_reason, invalid_actions]`` for each trajectory."""
    rows = []
    for position, (trajectory, score) in enumerate(zip(group.trajectories, group.scores, strict=True)):
        member = trajectory.metadata.get("member", position)
        invalid = trajectory.steps[-1].info.get("invalid_actions") if trajectory.steps else None
        rows.append(
            [
                member if isinstance(member, int) else position,
                score.value,
                score.value >= threshold,
                len(trajectory.steps),
                trajectory.stop_reason,
                invalid if isinstance(invalid, int) else None,
            ]
        )
    return rows


def _line_member_rows(data: dict[str, Any], threshold: float) -> list[list[Any]]:
    """:func:`_member_rows` of a line read without building its group (plain values: see ``line_facts``)."""
    rows = []
    for position, (trajectory, score) in enumerate(zip(data["trajectories"], data["scores"], strict=True)):
        member = trajectory.get("metadata", {}).get("member", position)
        steps = trajectory["steps"]
        invalid = steps[-1].get("info", {}).get("invalid_actions") if steps else None
        value = float(score["value"])
        rows.append(
            [
                member if isinstance(member, int) else position,
                value,
                value >= threshold,
                len(steps),
                trajectory.get("stop_reason"),
                invalid if isinstance(invalid, int) else None,
            ]
        )
    return rows


def _line_error_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """:func:`_error_rows` of a line read without building its group."""
    rows = []
    for error in data.get("errors", ()):
        rows.append(
            {
                "member": error.get("member"),
                "where": error.get("where", "engine"),
                "type": error["error_type"],
                "message": error["error_message"][:_INDEX_MESSAGE_CHARS],
                "step": error.get("step"),
            }
        )
    return rows


def _error_rows(group: TrajectoryGroup) -> list[dict[str, Any]]:
    return [
        {
            "member": error.member,
            "where": error.where,
            "type": error.error_type,
            "message": error.error_message[:_INDEX_MESSAGE_CHARS],
            "step": error.step,
        }
        for error in group.errors
    ]


def collect_run(path: str | Path, blob_sink: IO[str], *, run_number: int = 0) -> RunDigest:
    """Stream ``path`` once; write each group's blob element to ``blob_sink``; return the digest.

    Args:
        path: a run file written by ``rolloutgym run``.
        blob_sink: a text file receiving one ``<script type="application/x-rolloutgym-group">``
            element per group (the report appends it to the HTML body).
        run_number: the run's position in the report, used in the blobs' element ids.

    Raises:
        RunFileError: the file is missing, has no valid header, or has a corrupt line.
    """
    path = Path(path)
    header = read_header(path)
    threshold = float(header.get("pass_threshold", 1.0))
    builder = SummaryBuilder(header)
    tasks: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    rewards = array("d")
    blob_ids: list[str] = []
    blob_bytes = raw_bytes = 0
    pending: deque[tuple[str, Future[str]]] = deque()

    def flush(limit: int) -> None:
        nonlocal blob_bytes
        while len(pending) > limit:
            blob_id, future = pending.popleft()
            blob = future.result()
            blob_sink.write(f'<script type="application/x-rolloutgym-group" id="{blob_id}">{blob}</script>\n')
            blob_bytes += len(blob)

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="rolloutgym-report") as pool:
        for position, line in enumerate(iter_group_facts(path, allow_partial_tail=True)):
            task_index, group, data = line.task_index, line.group, line.data
            if group is None:  # plain values, read without building the group
                members, group_errors = _line_member_rows(data, threshold), _line_error_rows(data)
                rewards.extend(row[1] for row in members)
            else:
                if len(data.get("scores") or ()) != len(group.trajectories):
                    data["scores"] = [score.to_dict() for score in group.scores]  # filled in from the trajectories
                members, group_errors = _member_rows(group, threshold), _error_rows(group)
                rewards.extend(score.value for score in group.scores)
            item_id = line.facts.item_id
            text = group_blob(data)
            raw_bytes += len(text)
            blob_id = f"rg-blob-{run_number}-{position}"
            blob_ids.append(blob_id)
            pending.append((blob_id, pool.submit(compress_blob, text)))
            flush(_IN_FLIGHT)
            for error in group_errors:
                errors.append({"task_id": item_id, "group": position, **error})
            task = builder.add(task_index, line.facts)
            tasks.append(
                {
                    "task_id": item_id,
                    "task_index": task_index,
                    "group": position,
                    "members": members,
                    "failed": group_errors,
                    "trajectories": task.trajectories,
                    "passes": task.passes,
                    "pass_rate": task.pass_rate,
                    "mean_reward": task.mean_reward,
                    "mean_turns": task.mean_turns,
                    "errors": task.errors,
                }
            )
        flush(0)
    return RunDigest(path, header, builder.summary(), tasks, errors, list(rewards), blob_ids, blob_bytes, raw_bytes)
