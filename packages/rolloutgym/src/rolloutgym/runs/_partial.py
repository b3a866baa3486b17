"""A typed partial decode of a group line: only what a summary reads, the rest skipped unparsed.

A group line of a token-level run is mostly token ids, logprobs and messages; a summary reads
a few numbers per trajectory. Decoding the line into :mod:`msgspec` structs that name only the
fields :func:`~rolloutgym.runs.stats.line_facts` reads or checks (the others stay raw bytes,
skipped without building a Python object) makes ``rolloutgym show`` several times faster.

The decode accepts a subset of what ``line_facts`` accepts and computes the same
:class:`~rolloutgym.runs.stats.GroupFacts`: anything it is unsure of (a field of another
kind, a tagged or huge number, a token list that is not plain numbers, a line that is not
JSON) returns ``None``, and the caller reads the line the usual way (same numbers, same errors).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

from .stats import UNANSWERED_STOP_REASONS, GroupFacts, _usage_tokens, party_tuple

__all__ = ["PartialLine", "partial_facts"]

_NULL = b"null"
# A list of plain JSON numbers holds nothing but these, commas and its brackets: its length is its commas + 1.
_NUMBER_BYTES = b"0123456789-+.eE \t\r\n"
_BRACKET, _CLOSE = ord("["), ord("]")  # (a raw value starts at its first character)
_LIMIT = 2.0**1023  # line_facts reads numbers in (-2**1023, 2**1023) as they are; others take the full reader


class _Object(Struct):
    """Any JSON object, its members skipped (a value of another kind fails the decode)."""


class _PolicyInfo(Struct):
    usage: Any = None  # what a server that returns no token ids billed


class _Step(Struct):
    observation: Raw
    action: Raw
    reward: float
    next_observation: Raw
    terminated: bool
    truncated: bool
    info: _Object | UnsetType = UNSET
    policy_info: _PolicyInfo | UnsetType = UNSET
    policy_tokens: Raw | UnsetType = UNSET
    observation_tokens: Raw | UnsetType = UNSET
    policy_logprobs: Raw | UnsetType = UNSET
    policy_stop_reason: str | None = None


class _Trajectory(Struct):
    initial_observation: Raw
    steps: list[_Step]
    terminated: bool
    truncated: bool
    initial_info: _Object | UnsetType = UNSET
    metadata: dict[str, Any] = {}
    stop_reason: str | None = None


class _ScoreMetadata(Struct):
    attribution: Any = None  # rolloutgym_protocol.attribution (the other keys are skipped)


class _Score(Struct):
    value: float
    metadata: _ScoreMetadata | UnsetType = UNSET


class _Line(Struct):
    kind: str
    task_index: int
    item_id: str
    trajectories: list[_Trajectory]
    scores: list[_Score]
    errors: list[dict[str, Any]] = []
    metadata: _Object | UnsetType = UNSET


_DECODER = msgspec.json.Decoder(_Line)


class PartialLine(Struct):
    """What :func:`partial_facts` read of a group line: its task index, facts and failed members as in the file."""

    task_index: int
    facts: GroupFacts
    errors: list[dict[str, Any]]


def partial_facts(text: bytes) -> PartialLine | None:
    """The task index, :class:`GroupFacts` and error dicts of one group line; ``None``: read it the usual way."""
    try:
        line = _DECODER.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if line.kind != "group" or len(line.scores) != len(line.trajectories):
        return None
    values: list[float] = []
    turns: list[int] = []
    attributions: list[Any] = []
    generated = total = unanswered = 0
    seconds = 0.0
    for trajectory, score in zip(line.trajectories, line.scores, strict=True):
        value, elapsed = _number(score.value), _number(trajectory.metadata.get("elapsed_seconds", 0.0))
        counted = _tokens(trajectory.steps)
        if value is None or elapsed is None or counted is None:
            return None
        generated += counted[0]
        total += counted[1]
        seconds += elapsed
        if trajectory.stop_reason in UNANSWERED_STOP_REASONS:
            unanswered += 1
        else:
            values.append(value)
            turns.append(len(trajectory.steps))
            attributions.append(None if score.metadata is UNSET else score.metadata.attribution)
    failures, parties = _failures(line.errors), party_tuple(attributions)
    if failures is None or parties is None:
        return None
    facts = GroupFacts(
        line.item_id, tuple(values), tuple(turns), failures, total, generated, seconds, unanswered, parties
    )
    return PartialLine(line.task_index, facts, line.errors)


def _tokens(steps: list[_Step]) -> tuple[int, int] | None:
    """``(generated, total)`` tokens of a trajectory's steps, as ``line_facts`` counts them; ``None``: unsure."""
    generated = total = 0
    for step in steps:
        logprobs = step.policy_logprobs
        if not -_LIMIT < step.reward < _LIMIT or (  # (a NaN fails too)
            logprobs is not UNSET and memoryview(logprobs)[0] != _BRACKET and bytes(logprobs) != _NULL
        ):
            return None
        tokens, observed = _length(step.policy_tokens), _length(step.observation_tokens)
        if tokens is None or observed is None:
            return None
        if tokens >= 0:
            generated += tokens
            total += tokens
        else:  # no token ids: the tokens the server billed (policy_info["usage"])
            info = step.policy_info
            billed, counted = _usage_tokens({"usage": info.usage}) if info is not UNSET else (0, 0)
            generated += billed
            total += counted
        if observed > 0:
            total += observed
    return generated, total


def _failures(errors: list[dict[str, Any]]) -> tuple[tuple[str, str, str], ...] | None:
    failures = []
    for error in errors:
        kind, where, message = error.get("error_type"), error.get("where", "engine"), error.get("error_message")
        if type(kind) is not str or type(where) is not str or type(message) is not str:
            return None
        failures.append((kind, where, message[:300]))
    return tuple(failures)


def _number(value: Any) -> float | None:
    """A finite float in the range ``line_facts`` reads as it is (a bool, a tagged or huge value: ``None``)."""
    if type(value) is int:
        value = float(value) if -(1 << 1023) < value < (1 << 1023) else None
    if type(value) is not float or not -_LIMIT < value < _LIMIT:
        return None
    return value


def _length(raw: Raw | UnsetType) -> int | None:
    """The length of a list of plain numbers, -1 for none (absent or null), ``None`` for anything else."""
    if raw is UNSET:
        return -1
    data = bytes(raw)
    if data[0] != _BRACKET:
        return -1 if data == _NULL else None
    rest = data.translate(None, _NUMBER_BYTES)  # "[,,,]": the brackets and a comma between each two numbers
    commas = len(rest) - 2
    if rest.count(b",") != commas or rest[-1] != _CLOSE:
        return None
    return commas + 1 if commas or data.strip(b"[] \t\r\n") else 0
