"""The result of :func:`~rolloutgym.llm.run_multi_turn_rollout`: a batch in training shape.

:class:`RolloutBatch` keeps the input samples (unchanged), the trajectory or the error of
each, and columns a trainer consumes directly: left-aligned ``input_ids`` with
``input_lengths``, ``loss_mask`` (1 on sampled tokens, 0 on prompt and env tokens),
``generation_logprobs``, ``total_reward``, one ``reward/<name>`` column per Score
component, ``terminated`` / ``truncated`` / ``max_turns_reached``, stop reasons and
per-sample token counts. :func:`batch_metrics` gives the seed's rollout metrics plus
per-turn length histograms and per-task breakdowns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolloutgym_protocol import RolloutError, Trajectory
from rolloutgym_protocol.errors import ConfigError

from ..runs.stats import UNANSWERED_STOP_REASONS
from .metrics import metrics as trajectory_metrics
from .metrics import trajectory_tokens

__all__ = ["RESULT_COLUMNS", "UNANSWERED", "RolloutBatch", "batch_columns", "batch_metrics"]

RESULT_COLUMNS = (
    "env_id",
    "task_id",
    "input_ids",
    "input_lengths",
    "loss_mask",
    "generation_logprobs",
    "total_reward",
    "terminated",
    "truncated",
    "max_turns_reached",
    "stop_reason",
    "turn_stop_reasons",
    "turn_count",
    "gen_tokens",
    "env_tokens",
    "invalid_action_count",
    "malformed_thinking_count",
    "error",
)
"""The columns every :class:`RolloutBatch` has (plus ``reward/<name>`` per Score component)."""

_TRUNCATED = ("max_seq_len", "truncated", "timeout", "prompt_too_long")
UNANSWERED = UNANSWERED_STOP_REASONS
"""Stop reasons of episodes that ended before the model spoke: their reward columns are ``None``
(the same set run summaries leave out of pass rates, :mod:`rolloutgym.runs.stats`)."""
_MAX_TURNS = ("max_turns", "max_steps")


@dataclass(frozen=True)
class RolloutBatch:
    """A rolled-out batch, in the order of the input samples.

    ``batch["input_ids"]``, ``batch["reward/correct"]`` or ``batch["task_name"]`` give a
    column (result columns first, then the samples' own fields, which come back
    unchanged). Rows of a failed sample hold its ``error`` (a
    :meth:`RolloutError.to_dict`), ``stop_reason="error"``, empty token lists and
    ``None`` rewards (never a 0 in disguise). A ``reward/<name>`` entry is ``None`` for
    samples whose env has no such component.

    Attributes:
        samples: the input samples, unchanged.
        trajectories: each sample's trajectory (``None`` when it failed).
        errors: each sample's error record (``None`` when it finished).
        columns: the result columns (see :data:`RESULT_COLUMNS`).
        metrics: the rollout metrics (also returned next to the batch).
        pad_token_id: the id padding ``input_ids`` past ``input_lengths``.
    """

    samples: tuple[Mapping[str, Any], ...]
    trajectories: tuple[Trajectory | None, ...]
    errors: tuple[RolloutError | None, ...]
    columns: dict[str, list[Any]]
    metrics: dict[str, Any] = field(default_factory=dict)
    pad_token_id: int = 0

    def __len__(self) -> int:
        return len(self.samples)

    def keys(self) -> list[str]:
        """Every column name: result columns, then the samples' own fields."""
        names = list(self.columns)
        for sample in self.samples:
            names.extend(key for key in sample if key not in names)
        return names

    def __getitem__(self, key: str) -> list[Any]:
        if key in self.columns:
            return self.columns[key]
        if any(key in sample for sample in self.samples):
            return [sample.get(key) for sample in self.samples]
        raise KeyError(f"no column {key!r}; columns: {', '.join(self.keys())}")

    def __contains__(self, key: object) -> bool:
        return key in self.columns or any(key in sample for sample in self.samples)

    @property
    def reward_names(self) -> list[str]:
        """The Score component names found in the batch (the ``reward/<name>`` columns)."""
        return [key.removeprefix("reward/") for key in self.columns if key.startswith("reward/")]

    def rows(self) -> list[dict[str, Any]]:
        """One dict per sample: its own fields plus every result column."""
        return [
            {**sample, **{key: values[index] for key, values in self.columns.items()}}
            for index, sample in enumerate(self.samples)
        ]

    def to_tensors(self) -> dict[str, Any]:
        """The numeric columns as ``torch`` tensors (rewards missing for a sample are NaN).

        Keys: ``input_ids``, ``input_lengths``, ``loss_mask``, ``generation_logprobs``
        (when every finished sample has them), ``total_reward``, ``reward/<name>``,
        ``terminated``, ``truncated``, ``max_turns_reached``.
        """
        try:
            import torch
        except ImportError:
            raise ConfigError("RolloutBatch.to_tensors() needs torch: pip install torch") from None
        tensors: dict[str, Any] = {
            "input_ids": torch.tensor(self.columns["input_ids"], dtype=torch.long),
            "input_lengths": torch.tensor(self.columns["input_lengths"], dtype=torch.long),
            "loss_mask": torch.tensor(self.columns["loss_mask"], dtype=torch.float32),
        }
        logprobs = self.columns["generation_logprobs"]
        if all(row is not None for row in logprobs):
            tensors["generation_logprobs"] = torch.tensor(logprobs, dtype=torch.float32)
        for key in ("total_reward", *(f"reward/{name}" for name in self.reward_names)):
            values = [math.nan if value is None else float(value) for value in self.columns[key]]
            tensors[key] = torch.tensor(values, dtype=torch.float32)
        for key in ("terminated", "truncated", "max_turns_reached"):
            tensors[key] = torch.tensor(self.columns[key], dtype=torch.bool)
        return tensors


def _turn_stop_reasons(trajectory: Trajectory) -> list[str]:
    return [step.policy_stop_reason for step in trajectory.steps if step.policy_stop_reason is not None]


def batch_columns(
    results: Sequence[Trajectory | RolloutError],
    *,
    env_ids: Sequence[str | None],
    pad_token_id: int = 0,
) -> dict[str, list[Any]]:
    """The result columns of a rolled-out batch (see :class:`RolloutBatch`)."""
    count = len(results)
    sequences = [trajectory_tokens(result) if isinstance(result, Trajectory) else None for result in results]
    width = max((len(sequence) for sequence in sequences if sequence is not None), default=0)
    columns: dict[str, list[Any]] = {name: [] for name in RESULT_COLUMNS}
    components: dict[str, list[Any]] = {}
    for index, (result, sequence) in enumerate(zip(results, sequences, strict=True)):
        columns["env_id"].append(env_ids[index])
        length = len(sequence) if sequence is not None else 0
        padding = width - length
        ids = list(sequence.input_ids) if sequence is not None else []
        mask = list(sequence.loss_mask) if sequence is not None else []
        columns["input_ids"].append(ids + [pad_token_id] * padding)
        columns["input_lengths"].append(length)
        columns["loss_mask"].append(mask + [0] * padding)
        if sequence is not None and sequence.logprobs is None:
            columns["generation_logprobs"].append(None)
        else:
            logprobs = list(sequence.logprobs) if sequence is not None and sequence.logprobs is not None else []
            columns["generation_logprobs"].append(logprobs + [0.0] * padding)
        if not isinstance(result, Trajectory):
            columns["task_id"].append(None)
            columns["total_reward"].append(None)
            for key in ("terminated", "truncated", "max_turns_reached"):
                columns[key].append(False)
            columns["stop_reason"].append("error")
            columns["turn_stop_reasons"].append([])
            for key in ("turn_count", "gen_tokens", "env_tokens", "invalid_action_count", "malformed_thinking_count"):
                columns[key].append(0)
            columns["error"].append(result.to_dict())
            continue
        columns["task_id"].append(result.metadata.get("task_id"))
        stop = result.stop_reason or ("terminated" if result.terminated else "truncated")
        unanswered = stop in UNANSWERED
        columns["total_reward"].append(None if unanswered else result.total_reward)
        for name, value in result.score.component_values.items():
            components.setdefault(name, [None] * count)[index] = None if unanswered else value
        columns["terminated"].append(result.terminated)
        columns["truncated"].append(stop in _TRUNCATED)
        columns["max_turns_reached"].append(stop in _MAX_TURNS)
        columns["stop_reason"].append(stop)
        columns["turn_stop_reasons"].append(_turn_stop_reasons(result))
        columns["turn_count"].append(sum(1 for step in result.steps if step.policy_tokens))
        columns["gen_tokens"].append(sum(len(step.policy_tokens or ()) for step in result.steps))
        columns["env_tokens"].append(sum(len(step.observation_tokens or ()) for step in result.steps))
        last = result.steps[-1].policy_info if result.steps else {}
        columns["invalid_action_count"].append(int(last.get("invalid_action_count", 0) or 0))
        columns["malformed_thinking_count"].append(int(last.get("malformed_thinking_count", 0) or 0))
        columns["error"].append(None)
    for name in sorted(components):
        columns[f"reward/{name}"] = components[name]
    return columns


def _turn_lengths(trajectories: Sequence[Trajectory]) -> tuple[list[int], list[int], list[int]]:
    """Per sampled turn: tokens generated, the context it was sampled from, and their sum."""
    generated: list[int] = []
    inputs: list[int] = []
    totals: list[int] = []
    for trajectory in trajectories:
        context = 0
        for step in trajectory.steps:
            context += len(step.observation_tokens or ())
            sampled = len(step.policy_tokens or ())
            if sampled:
                generated.append(sampled)
                inputs.append(context)
                totals.append(context + sampled)
            context += sampled
    return generated, inputs, totals


def batch_metrics(
    results: Sequence[Trajectory | RolloutError],
    task_names: Sequence[str],
    *,
    waves: Sequence[int],
    generation_seconds: float,
    wall_seconds: float,
) -> dict[str, Any]:
    """Rollout metrics of a batch.

    The seed's names over the finished samples (:func:`~rolloutgym.llm.metrics`:
    ``total_turns``, ``avg_turns_per_sample``, ``natural_termination_rate``,
    ``truncation_rate``, ``max_turns_reached_rate``, token means, reward statistics,
    ``retokenization_mismatches``, ...), then ``num_samples`` (the whole batch),
    ``num_errors``, ``generation_calls`` (= waves), ``wave_sizes``,
    ``mean_wave_size``, ``generation_seconds``, ``wall_seconds``, the per-turn
    histograms ``histogram/gen_tokens_length``, ``histogram/input_tokens_length`` and
    ``histogram/total_tokens_length`` (one value per sampled turn), and per task name
    ``task/<name>/num_samples``, ``task/<name>/num_errors`` and
    ``task/<name>/mean_total_reward``.
    """
    trajectories = [result for result in results if isinstance(result, Trajectory)]
    summary: dict[str, Any] = dict(trajectory_metrics(trajectories)) if trajectories else {}
    summary["num_completed"] = len(trajectories)
    summary["num_samples"] = len(results)
    summary["num_errors"] = len(results) - len(trajectories)
    summary["num_prompt_too_long"] = sum(1 for t in trajectories if t.stop_reason in UNANSWERED)
    summary["generation_calls"] = len(waves)
    summary["wave_sizes"] = list(waves)
    summary["mean_wave_size"] = sum(waves) / len(waves) if waves else 0.0
    summary["generation_seconds"] = generation_seconds
    summary["wall_seconds"] = wall_seconds
    generated, inputs, totals = _turn_lengths(trajectories)
    summary["histogram/gen_tokens_length"] = generated
    summary["histogram/input_tokens_length"] = inputs
    summary["histogram/total_tokens_length"] = totals
    for name in sorted(set(task_names)):
        members = [result for result, task in zip(results, task_names, strict=True) if task == name]
        finished = [result for result in members if isinstance(result, Trajectory)]
        summary[f"task/{name}/num_samples"] = len(members)
        summary[f"task/{name}/num_errors"] = len(members) - len(finished)
        if finished:
            summary[f"task/{name}/mean_total_reward"] = sum(t.total_reward for t in finished) / len(finished)
    return summary
