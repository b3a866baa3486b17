"""Token-level exports for RL trainers: ``tokens`` (one sequence per trajectory) and
``tinker`` (Tinker ``Datum``-shaped records).

Both need trajectories recorded by a token-level policy (``hf:``, ``vllm:``, ``tinker:``,
or an ``openai:`` server that returns token ids). The provenance check runs on every
trajectory; a trajectory whose tokens differ from what was sampled is refused, unless
``allow_mismatches=true``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rolloutgym_protocol.errors import ConfigError

from ..llm.metrics import TokenSequence, check_provenance, trajectory_tokens
from ..runs import Run
from ._common import ExportRecord, as_bool, as_float, check_no_options, iter_records, write_jsonl

__all__ = ["export_tinker", "export_tokens", "token_records"]

TOKEN_OPTIONS = ("invalid_action_penalty", "normalize_advantages", "allow_mismatches", "skip_empty")


def token_records(run: Run, options: dict[str, Any], format_name: str) -> Iterator[tuple[ExportRecord, TokenSequence]]:
    """Every trajectory that has tokens, with its sequence (options are consumed)."""
    penalty = as_float(options, "invalid_action_penalty", 0.0)
    normalize = as_bool(options, "normalize_advantages", False)
    allow_mismatches = as_bool(options, "allow_mismatches", False)
    skip_empty = as_bool(options, "skip_empty", True)
    check_no_options(format_name, options, TOKEN_OPTIONS)
    records = list(iter_records(run, invalid_action_penalty=penalty, normalize=normalize))
    if records and all(trajectory_tokens(record.trajectory) is None for record in records):
        raise ConfigError(
            f"{run.path}: no trajectory has token ids (policy '{run.header.get('policy')}' records none); "
            "token exports need a token-level policy such as hf:MODEL, vllm:MODEL or tinker:MODEL"
        )
    for record in records:
        sequence = trajectory_tokens(record.trajectory)
        if sequence is None or (skip_empty and not any(sequence.loss_mask)):
            continue
        mismatches = check_provenance(record.trajectory)
        if mismatches and not allow_mismatches:
            raise ConfigError(
                f"task {record.task_id} member {record.member}: {mismatches} turn(s) whose recorded tokens differ "
                "from what the model saw or sampled; training on them would be off-policy. "
                "Pass --option allow_mismatches=true to export anyway."
            )
        yield record, sequence


def export_tokens(run: Run, out_path: str | Path, **options: Any) -> Path:
    """One JSON line per trajectory: ``input_ids``, ``loss_mask`` (1 = sampled),
    ``logprobs`` (sampled logprobs, 0.0 on observation tokens, null when not recorded),
    ``reward``, ``advantage`` (group-relative), ``turn_spans`` and identification fields.

    Options:
        invalid_action_penalty: subtracted from the reward per invalid action (default 0).
        normalize_advantages: divide advantages by the group's reward std (default false).
        allow_mismatches: export trajectories that fail the provenance check (default false).
        skip_empty: leave out trajectories with no sampled token (default true).
    """

    def rows() -> Iterator[dict[str, Any]]:
        for record, sequence in token_records(run, dict(options), "tokens"):
            last = record.trajectory.steps[-1].policy_info if record.trajectory.steps else {}
            yield {
                "env_id": record.env_id,
                "task_id": record.task_id,
                "member": record.member,
                "input_ids": list(sequence.input_ids),
                "loss_mask": list(sequence.loss_mask),
                "logprobs": None if sequence.logprobs is None else list(sequence.logprobs),
                "reward": record.reward,
                "score": record.score.value,
                "advantage": record.advantage,
                "turn_spans": [list(span) for span in sequence.turn_spans],
                "num_turns": len(sequence.turn_spans),
                "stop_reason": record.trajectory.stop_reason,
                "invalid_action_count": int(last.get("invalid_action_count", 0) or 0),
                "malformed_thinking_count": int(last.get("malformed_thinking_count", 0) or 0),
            }

    return write_jsonl(out_path, rows(), what="trajectories with sampled tokens")


def _tensor(values: list[Any], dtype: str) -> dict[str, Any]:
    return {"data": values, "dtype": dtype, "shape": [len(values)]}


def export_tinker(run: Run, out_path: str | Path, **options: Any) -> Path:
    """Tinker ``Datum`` records, one JSON line per trajectory, for
    ``forward_backward(..., loss_fn="importance_sampling")`` (or ``"cross_entropy"``
    with the ``weights``).

    Each line is ``{"model_input": {"chunks": [{"type": "encoded_text", "tokens":
    input_ids[:-1]}]}, "loss_fn_inputs": {"target_tokens", "weights", "logprobs",
    "advantages"}}`` with tensors as ``{"data", "dtype", "shape"}`` (Tinker's
    ``TensorData``), targets shifted by one token; ``logprobs`` is left out when the policy
    recorded none. Load a line with ``tinker.types.Datum.model_validate(json.loads(line))``.
    Same options as ``tokens``.
    """

    def rows() -> Iterator[dict[str, Any]]:
        for record, sequence in token_records(run, dict(options), "tinker"):
            ids = list(sequence.input_ids)
            weights = [float(mask) for mask in sequence.loss_mask[1:]]
            inputs: dict[str, Any] = {
                "target_tokens": _tensor(ids[1:], "int64"),
                "weights": _tensor(weights, "float32"),
                "advantages": _tensor([record.advantage * weight for weight in weights], "float32"),
            }
            if sequence.logprobs is not None:
                inputs["logprobs"] = _tensor(list(sequence.logprobs[1:]), "float32")
            yield {
                "model_input": {"chunks": [{"type": "encoded_text", "tokens": ids[:-1]}]},
                "loss_fn_inputs": inputs,
            }

    return write_jsonl(out_path, rows(), what="trajectories with sampled tokens")
