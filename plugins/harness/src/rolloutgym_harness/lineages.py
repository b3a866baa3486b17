"""A rollout graph over recorded model calls: calls linked by token prefix into lineages, each
lineage one training row with exact tokens, and capture validation that flags what must not
become trainable tokens.

A harness's history is not always append-only: sub-agents, compaction (a summary replacing the
history), retries, ``n`` choices and title generators all start prompts that do not extend the
previous call. Here a call's parent is the latest earlier call whose prompt + completion is a
prefix of its prompt, token for token; a call with no such parent starts a lineage. Every path
from a lineage's first call to a call nobody continued is one :class:`LineageRow`: the tokens of
its last call (prompt + completion), with loss mask 1 on each sampled completion along the path
and 0 elsewhere (prompts, tool results, what the harness wrote).

:func:`capture_problems` says why a call cannot be trained on: prompt or completion ids missing,
logprobs not one per token, a stream that did not end with a stop reason, or a call whose reply
the endpoint changed (a tool call withheld). Such a call's completion keeps loss mask 0 and is
listed in ``LineageRow.flagged``: never silently turned into trainable tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import Step, Trajectory
from rolloutgym_protocol.errors import ConfigError

from .recording import CallRecord

__all__ = ["LineageRow", "capture_problems", "call_lineages", "harness_rows", "link_calls", "lineage_rows"]

_ENDED = ("stop", "length", "tool_calls", "end_turn", "max_tokens", "max_seq_len")


def capture_problems(call: CallRecord) -> list[str]:
    """Why ``call`` cannot become trainable tokens (empty: it can)."""
    problems = []
    if call.prompt_token_ids is None:
        problems.append("prompt token ids missing")
    if call.completion_token_ids is None:
        problems.append("completion token ids missing")
    elif call.logprobs is not None and len(call.logprobs) != len(call.completion_token_ids):
        problems.append("logprobs are not one per completion token")
    if call.stop_reason not in _ENDED:
        problems.append(f"the stream did not end with a stop reason ({call.stop_reason!r})")
    problems += [f"reply changed by the endpoint: {problem}" for problem in call.problems if "withheld" in problem]
    return problems


def link_calls(calls: Sequence[CallRecord]) -> list[int | None]:
    """Each call's parent (an index into ``calls``): the latest earlier call whose prompt +
    completion is a prefix of its prompt (the longest such context wins), else ``None``."""
    parents: list[int | None] = []
    contexts: list[tuple[int, ...] | None] = []
    for call in calls:
        prompt = call.prompt_token_ids
        best, best_length = None, -1
        if prompt is not None:
            for index in range(len(contexts) - 1, -1, -1):
                context = contexts[index]
                if context is not None and len(context) > best_length and tuple(prompt[: len(context)]) == context:
                    best, best_length = index, len(context)
        parents.append(best)
        complete = prompt is not None and call.completion_token_ids is not None
        contexts.append(tuple(prompt) + tuple(call.completion_token_ids) if complete else None)  # type: ignore[arg-type]
    return parents


@dataclass
class LineageRow:
    """One training row: the calls of one lineage path, its tokens and which of them were sampled."""

    lineage: int
    calls: list[int]
    input_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]  # one per token (0.0 where the loss mask is 0)
    flagged: list[int] = field(default_factory=list)  # calls on the path that cannot be trained on
    reward: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def call_lineages(calls: Sequence[CallRecord]) -> list[int]:
    """The lineage of each call (lineage ids count the calls that start one, in order)."""
    parents = link_calls(calls)
    lineage: list[int] = []
    starts = 0
    for parent in parents:
        if parent is None:
            lineage.append(starts)
            starts += 1
        else:
            lineage.append(lineage[parent])
    return lineage


def lineage_rows(calls: Sequence[CallRecord], *, reward: float = 0.0) -> list[LineageRow]:
    """One row per path from a lineage's first call to a call no later call continued."""
    parents = link_calls(calls)
    lineage = call_lineages(calls)
    continued = {parent for parent in parents if parent is not None}
    rows = []
    for leaf, call in enumerate(calls):
        if leaf in continued or call.prompt_token_ids is None or call.completion_token_ids is None:
            continue
        path = [leaf]
        while parents[path[-1]] is not None:
            path.append(parents[path[-1]])  # type: ignore[arg-type]
        path.reverse()
        input_ids = list(call.prompt_token_ids) + list(call.completion_token_ids)
        mask = [0] * len(input_ids)
        logprobs = [0.0] * len(input_ids)
        flagged = []
        for index in path:
            step = calls[index]
            if capture_problems(step):
                flagged.append(index)
                continue
            start = len(step.prompt_token_ids or ())
            for offset, _ in enumerate(step.completion_token_ids or ()):
                mask[start + offset] = 1
                if step.logprobs is not None:
                    logprobs[start + offset] = float(step.logprobs[offset])
        rows.append(LineageRow(lineage[leaf], path, input_ids, mask, logprobs, flagged, reward))
    return rows


def _calls_of(item: Step | Trajectory | Sequence[Mapping[str, Any]]) -> tuple[list[CallRecord], float]:
    if isinstance(item, (Step, Trajectory)):
        steps = list(item.steps) if isinstance(item, Trajectory) else [item]
        records = [step.policy_info.get("harness") for step in steps]
        records = [record for record in records if isinstance(record, Mapping)]
        if not records:
            raise ConfigError("no policy_info['harness'] here: it was not made by a harness policy")
        calls = [CallRecord(**call) for record in records for call in record.get("calls", [])]
        return calls, float(sum(step.reward for step in steps))
    return [CallRecord(**call) for call in item], 0.0


def harness_rows(
    item: Step | Trajectory | Sequence[Mapping[str, Any]], *, reward: float | None = None
) -> list[LineageRow]:
    """The training rows (one per lineage path) of a harness step or episode (also read back from
    a run file), or of recorded calls (``endpoint.records()``); ``reward`` defaults to the episode's."""
    calls, total = _calls_of(item)
    return lineage_rows(calls, reward=total if reward is None else reward)


def capture_summary(calls: Sequence[CallRecord]) -> dict[str, Any]:
    """What the run file keeps per harness step: each call's lineage and parent, the flagged
    calls with their problems, and the counts."""
    flagged = {call.index: problems for call in calls if (problems := capture_problems(call))}
    return {
        "lineage": call_lineages(calls),
        "parent": link_calls(calls),
        "flagged": {str(index): problems for index, problems in flagged.items()},
        "lineages": len(set(call_lineages(calls))),
        "flagged_calls": len(flagged),
    }
