"""Chat-format exports for fine-tuning services: ``sft`` and ``dpo``.

``sft`` writes the passing trajectories as OpenAI fine-tuning lines
(``{"messages": [...], "tools"?: [...]}``); ``dpo`` pairs a better and a worse trajectory
of the same task (``{"input": {"messages", "tools"?}, "preferred_output": [...],
"non_preferred_output": [...]}``, OpenAI's preference format; ``style=trl`` writes
``{"prompt", "chosen", "rejected"}`` instead).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ..runs import Run
from ._common import (
    ExportRecord,
    as_bool,
    as_float,
    check_no_options,
    conversation,
    iter_records,
    pass_threshold,
    trajectory_tools,
    write_jsonl,
)

__all__ = ["export_dpo", "export_sft"]


def export_sft(run: Run, out_path: str | Path, **options: Any) -> Path:
    """Passing trajectories (score >= ``min_score``, default the run's pass threshold)
    as OpenAI chat fine-tuning JSONL.

    Options:
        min_score: the score a trajectory needs (default: the run's ``pass_threshold``).
        include_tools: add the tool definitions the policy saw (default true).
    """
    options = dict(options)
    threshold = pass_threshold(run, options)
    include_tools = as_bool(options, "include_tools", True)
    check_no_options("sft", options, ("min_score", "include_tools"))

    def rows() -> Iterator[dict[str, Any]]:
        for record in iter_records(run):
            if record.score.value < threshold:
                continue
            messages = conversation(record.trajectory)
            if not any(message["role"] == "assistant" for message in messages):
                continue
            row: dict[str, Any] = {"messages": messages}
            tools = trajectory_tools(record.trajectory) if include_tools else []
            if tools:
                row["tools"] = tools
            yield row

    return write_jsonl(
        out_path, rows(), what=f"passing trajectories (score >= {threshold:g}); lower it with --option min_score="
    )


def _split(record: ExportRecord) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(prompt, completion)``: the messages before the first assistant turn, and the rest."""
    messages = conversation(record.trajectory)
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            return messages[:index], messages[index:]
    return messages, []


def _pairs(records: list[ExportRecord], mode: str, margin: float) -> Iterator[tuple[ExportRecord, ExportRecord]]:
    ranked = sorted(records, key=lambda record: record.reward, reverse=True)
    if mode == "best_worst":
        if len(ranked) >= 2 and ranked[0].reward - ranked[-1].reward > margin:
            yield ranked[0], ranked[-1]
        return
    for better, worse in combinations(ranked, 2):
        if better.reward - worse.reward > margin:
            yield better, worse


def export_dpo(run: Run, out_path: str | Path, **options: Any) -> Path:
    """Preference pairs from trajectories of the same task (run with ``-n 2`` or more).

    Options:
        pairs: ``best_worst`` (one pair per task, default) or ``all`` (every pair whose
            rewards differ by more than ``margin``).
        margin: the reward gap a pair needs (default 0: any strict difference).
        style: ``openai`` (default) or ``trl``.
        invalid_action_penalty: subtracted from the reward per invalid action.
    """
    options = dict(options)
    mode = options.pop("pairs", "best_worst")
    style = options.pop("style", "openai")
    margin = as_float(options, "margin", 0.0)
    penalty = as_float(options, "invalid_action_penalty", 0.0)
    check_no_options("dpo", options, ("pairs", "margin", "style", "invalid_action_penalty"))
    if mode not in ("best_worst", "all"):
        raise ConfigError(f"dpo option pairs={mode!r}: use best_worst or all")
    if style not in ("openai", "trl"):
        raise ConfigError(f"dpo option style={style!r}: use openai or trl")
    by_task: dict[str, list[ExportRecord]] = {}
    for record in iter_records(run, invalid_action_penalty=penalty):
        by_task.setdefault(record.task_id, []).append(record)

    def rows() -> Iterator[dict[str, Any]]:
        for task_id, records in by_task.items():
            for better, worse in _pairs(records, mode, margin):
                prompt, chosen = _split(better)
                _, rejected = _split(worse)
                if not chosen or not rejected:
                    continue
                if style == "trl":
                    yield {"task_id": task_id, "prompt": prompt, "chosen": chosen, "rejected": rejected}
                    continue
                tools = trajectory_tools(better.trajectory)
                yield {
                    "input": {"messages": prompt, **({"tools": tools} if tools else {})},
                    "preferred_output": chosen,
                    "non_preferred_output": rejected,
                }

    return write_jsonl(
        out_path, rows(), what="pair of trajectories of one task with different rewards (run with -n 2 or more)"
    )
