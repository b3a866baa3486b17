"""The ``hf`` export: a Hugging Face ``datasets.Dataset``, saved to disk or as Parquet.

One row per trajectory: ``env_id``, ``task_id``, ``member``, ``reward``, ``score``,
``advantage``, ``passed``, ``messages`` (the chat as a JSON string, since tool-call
arguments have no fixed schema), and when recorded ``input_ids``, ``loss_mask``,
``logprobs``. ``datasets`` is imported only here (the extra ``datasets`` of rolloutgym).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rolloutgym_protocol.display import json_text
from rolloutgym_protocol.errors import ConfigError

from ..install_hints import pip_install
from ..llm.metrics import trajectory_tokens
from ..runs import Run
from ._common import as_bool, as_float, check_no_options, conversation, iter_records, open_output, pass_threshold

__all__ = ["export_hf"]


def export_hf(run: Run, out_path: str | Path, **options: Any) -> Path:
    """Save the run as a ``datasets.Dataset``: a folder (``load_from_disk``), or a Parquet
    file when ``out_path`` ends with ``.parquet`` (``Dataset.from_parquet``).

    Options:
        min_score: a trajectory with at least this score has ``passed`` true (default: the
            run's pass threshold).
        only_passed: keep only passing trajectories (default false).
        normalize_advantages: divide advantages by the group's reward std (default false).
    """
    options = dict(options)
    threshold = pass_threshold(run, options)
    only_passed = as_bool(options, "only_passed", False)
    normalize = as_bool(options, "normalize_advantages", False)
    penalty = as_float(options, "invalid_action_penalty", 0.0)
    check_no_options("hf", options, ("min_score", "only_passed", "normalize_advantages", "invalid_action_penalty"))
    try:
        import datasets
    except ImportError:
        raise ConfigError(
            f"the 'hf' export needs the datasets package: {pip_install('rolloutgym', 'datasets')}"
        ) from None
    features = _features(datasets)
    rows = _columns(
        run, list(features), threshold=threshold, only_passed=only_passed, penalty=penalty, normalize=normalize
    )
    if not rows["task_id"]:
        raise ConfigError("nothing to export: the run has no (passing) trajectories")
    dataset = datasets.Dataset.from_dict(rows, features=features)
    out = open_output(out_path)
    _save(datasets, dataset, out)
    return out


def _features(datasets: Any) -> Any:
    """The dataset's columns and their types."""
    return datasets.Features(
        {
            "env_id": datasets.Value("string"),
            "task_id": datasets.Value("string"),
            "member": datasets.Value("int64"),
            "reward": datasets.Value("float64"),
            "score": datasets.Value("float64"),
            "advantage": datasets.Value("float64"),
            "passed": datasets.Value("bool"),
            "messages": datasets.Value("string"),
            "input_ids": datasets.Sequence(datasets.Value("int64")),
            "loss_mask": datasets.Sequence(datasets.Value("int8")),
            "logprobs": datasets.Sequence(datasets.Value("float32")),
        }
    )


def _columns(
    run: Run, names: list[str], *, threshold: float, only_passed: bool, penalty: float, normalize: bool
) -> dict[str, list[Any]]:
    """One value per trajectory in each column of ``names``."""
    rows: dict[str, list[Any]] = {name: [] for name in names}
    for record in iter_records(run, invalid_action_penalty=penalty, normalize=normalize):
        passed = record.score.value >= threshold
        if only_passed and not passed:
            continue
        sequence = trajectory_tokens(record.trajectory)
        rows["env_id"].append(record.env_id)
        rows["task_id"].append(record.task_id)
        rows["member"].append(record.member)
        rows["reward"].append(record.reward)
        rows["score"].append(record.score.value)
        rows["advantage"].append(record.advantage)
        rows["passed"].append(passed)
        rows["messages"].append(json_text(conversation(record.trajectory)))
        rows["input_ids"].append(list(sequence.input_ids) if sequence else None)
        rows["loss_mask"].append(list(sequence.loss_mask) if sequence else None)
        rows["logprobs"].append(list(sequence.logprobs) if sequence and sequence.logprobs is not None else None)
    return rows


def _save(datasets: Any, dataset: Any, out: Path) -> None:
    """Save to a folder, or to Parquet for a ``.parquet`` path, without progress bars."""
    bars_were_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        if out.suffix == ".parquet":
            dataset.to_parquet(str(out))
        else:
            dataset.save_to_disk(str(out))
    finally:
        if bars_were_enabled:
            datasets.enable_progress_bars()
